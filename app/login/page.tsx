// Sign-in page; already signed-in people go straight on.
import { redirect } from "next/navigation";
import { LoginForm } from "@/components/login-form";
import { safeNextPath } from "@/lib/auth/next-path";
import { oidcSettings } from "@/lib/auth/oidc/provider";
import { currentUser } from "@/lib/auth/page-access";

export const dynamic = "force-dynamic";

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const { next } = await searchParams;
  const target = safeNextPath(next);
  if (await currentUser()) redirect(target);
  const sso = oidcSettings();
  return (
    <main className="login">
      <h1>Sign in to Tally</h1>
      {sso && (
        <>
          {/* A plain link, not next/link: prefetching it would start a sign-in. */}
          <a className="button sso" href={`/api/auth/oidc/start?next=${encodeURIComponent(target)}`}>
            Sign in with {sso.name}
          </a>
          <p className="muted">or with a password:</p>
        </>
      )}
      <LoginForm next={target} />
      <p className="muted">
        Forgot your password? Ask an admin to reset it. With <code>npm start</code>, the demo users’ passwords are
        printed in the terminal.
      </p>
    </main>
  );
}
