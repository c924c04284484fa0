import { TransformField } from './proxy';

/** Compiles transform code without running it, so code that cannot run is refused when it is saved. */
export abstract class TransformCompiler {
  /** Throws a ValidationError on `<field>.code` whose message names the line and the column. */
  abstract validate(code: string, field: TransformField): void;
}
