import { createContext, ReactNode, useContext } from 'react';
import type { Api } from './client';

const ApiContext = createContext<Api | null>(null);

/** The signed-in key's client for everything below (src/app/App.tsx provides it once signed in). */
export function ApiProvider({ api, children }: { api: Api; children: ReactNode }) {
  return <ApiContext.Provider value={api}>{children}</ApiContext.Provider>;
}

/** The typed API client acting as the signed-in key. */
export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi() outside an ApiProvider: only signed-in pages call the API');
  return api;
}
