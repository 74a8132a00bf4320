"use client";
// Admin changes: a JSON API call with the CSRF token, refreshing the listed data after.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api } from "@/components/api-client";
import { useCsrfToken } from "@/components/providers";

export function useAdminMutation<Vars, Result>(
  request: (v: Vars) => { path: string; method: string; body?: unknown },
  refresh: unknown[],
) {
  const csrfToken = useCsrfToken();
  const client = useQueryClient();
  return useMutation({
    mutationFn: (v: Vars) => {
      const r = request(v);
      return api<Result>(r.path, { method: r.method, body: r.body, csrfToken });
    },
    onSettled: () => client.invalidateQueries({ queryKey: refresh }),
  });
}
