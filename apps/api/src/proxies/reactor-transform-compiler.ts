import { TransformCompiler, TransformField, ValidationError } from '@gatehouse/domain';
import { Reactor, ReactorCompileError } from '@gatehouse/reactor';

/** The domain's TransformCompiler over the reactor, which compiles exactly as it will later run. */
export class ReactorTransformCompiler extends TransformCompiler {
  constructor(private readonly reactor: Reactor) {
    super();
  }

  validate(code: string, field: TransformField): void {
    try {
      this.reactor.validate(code);
    } catch (error) {
      if (error instanceof ReactorCompileError) {
        throw ValidationError.single(`${field}.code`, `does not compile: ${error.message}`);
      }
      throw error;
    }
  }
}
