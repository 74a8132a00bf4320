// The browser's side of the JSON API: same-origin fetches that carry the CSRF
// token on state changes and turn an error body into an Error with its message.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T>(
  path: string,
  options: { method?: string; body?: unknown; csrfToken?: string } = {},
): Promise<T> {
  const method = options.method ?? "GET";
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: {
      accept: "application/json",
      ...(options.body !== undefined && { "content-type": "application/json" }),
      ...(method !== "GET" && options.csrfToken && { "x-csrf-token": options.csrfToken }),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const data = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!res.ok) {
    // A session that ended mid-page: back to sign-in, then here. (A wrong password is also 401, but says so.)
    if (res.status === 401 && data?.error?.code === "unauthenticated" && typeof window !== "undefined")
      window.location.assign(`/login?next=${encodeURIComponent(window.location.pathname)}`);
    throw new ApiError(
      res.status,
      data?.error?.code ?? "error",
      data?.error?.message ?? `Request failed (${res.status})`,
    );
  }
  return data as T;
}
