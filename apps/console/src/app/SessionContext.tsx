import { createContext, ReactNode, useContext } from 'react';
import type { Application } from '../api/client';

export interface SessionInfo {
  /** The signed-in key's own application: what it holds decides the pages and actions shown. */
  application: Application;
  /** The key may not read its own application: `application` holds only the list permissions probed. */
  probed: boolean;
  /** The signed-in key's own application was edited: what the console shows follows its new permissions. */
  selfChanged: (application: Application) => void;
}

const SessionContext = createContext<SessionInfo | null>(null);

export function SessionProvider({ session, children }: { session: SessionInfo; children: ReactNode }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

/** Who is signed in and what the key may do. */
export function useSession(): SessionInfo {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession() outside a SessionProvider');
  return session;
}

/** Whether the signed-in key holds `permission` as a plain permission. */
export function useMay(): (permission: string) => boolean {
  const { application } = useSession();
  return (permission) => (application.permissions as readonly string[]).includes(permission);
}
