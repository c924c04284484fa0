import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { problem, sendProblem } from './problem-details';

/** What this needs of an Express router's layer (router 2.x): its path matcher and, for a route, its methods. */
interface RouterLayer {
  match(path: string): unknown;
  route?: { _handlesMethod(method: string): boolean; _methods(): string[] };
}
type Route = Required<RouterLayer>;
/** An Express 5 application's router (`app.router`), as far as this reads it. */
export interface ExpressRouter {
  stack: RouterLayer[];
}

/**
 * A known path asked with a method none of its routes takes is a 405 ProblemDetails with `Allow` (RFC 9110 15.5.6):
 * the methods of every route whose pattern matches the path, HEAD wherever GET is. Answered before the body is read
 * or the caller authenticated, so `PATCH /applications/{id}` is not a 400 about its body. The routes are the router's
 * own (read on the first request, once Nest has registered them), matched as the router matches them; a path no
 * route matches goes on to the 404.
 */
export function methodNotAllowed(routerOf: () => ExpressRouter): RequestHandler {
  let routes: Route[] | undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    routes ??= routerOf().stack.filter((layer): layer is Route => layer.route !== undefined);
    const allowed = new Set<string>();
    for (const layer of routes) {
      if (!matches(layer, req.path)) continue;
      if (layer.route._handlesMethod(req.method)) return next();
      for (const method of layer.route._methods()) allowed.add(method);
    }
    if (allowed.size === 0) return next();
    const allow = [...allowed].sort().join(', ');
    sendProblem(res, problem(405, `${req.method} is not allowed on this path; it allows ${allow}`), { allow });
  };
}

function matches(layer: RouterLayer, path: string): boolean {
  try {
    return Boolean(layer.match(path));
  } catch {
    // A parameter that does not decode (`%ZZ`): the router answers that request itself.
    return false;
  }
}
