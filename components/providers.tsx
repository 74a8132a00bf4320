"use client";
// Client-side context for signed-in pages: react-query for live data and the
// session's CSRF token, which every state-changing request must carry.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createContext, useContext, useState, type ReactNode } from "react";

const CsrfContext = createContext<string>("");

export function useCsrfToken(): string {
  return useContext(CsrfContext);
}

export function Providers({ csrfToken, children }: { csrfToken: string; children: ReactNode }) {
  const [client] = useState(
    () => new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, retry: 1, refetchOnWindowFocus: true } } }),
  );
  return (
    <CsrfContext.Provider value={csrfToken}>
      <QueryClientProvider client={client}>{children}</QueryClientProvider>
    </CsrfContext.Provider>
  );
}
