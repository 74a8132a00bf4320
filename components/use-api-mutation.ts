"use client";
// A state change through the JSON API with the session's CSRF token, refreshing
// the listed data afterwards (whatever the outcome: the list shows the truth).
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api } from "@/components/api-client";
import { useCsrfToken } from "@/components/providers";

export function useApiMutation<Vars, Result>(
  request: (v: Vars) => { path: string; method?: string; body?: unknown },
  refresh: unknown[][],
) {
  const csrfToken = useCsrfToken();
  const client = useQueryClient();
  return useMutation({
    mutationFn: (v: Vars) => {
      const r = request(v);
      return api<Result>(r.path, { method: r.method ?? "POST", body: r.body, csrfToken });
    },
    onSettled: () => Promise.all(refresh.map((queryKey) => client.invalidateQueries({ queryKey }))),
  });
}
