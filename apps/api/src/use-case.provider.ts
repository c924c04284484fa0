import { Provider } from '@nestjs/common';

/** A use case is a plain class; its constructor takes ports, resolved here by their abstract-class tokens. */
export function useCase<T>(type: new (...args: never[]) => T, inject: unknown[]): Provider {
  return { provide: type, inject: inject as never[], useFactory: (...deps: never[]) => new type(...deps) };
}
