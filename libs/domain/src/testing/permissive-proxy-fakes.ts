import { DestinationPolicy } from '../proxies/destination-policy';
import { TransformCompiler } from '../proxies/transform-compiler';

/** A destination policy that admits every host: for unit tests whose subject is not the destination. */
export class AnyDestinationPolicy extends DestinationPolicy {
  readonly allowHttp = false;
  allowsLiteralHost(): boolean {
    return true;
  }
}

/** A compiler that accepts any code: for unit tests whose subject is not the transform. */
export class AcceptingCompiler extends TransformCompiler {
  validate(): void {}
}
