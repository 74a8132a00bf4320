// Sign-in page; already signed-in people go straight on.
import { redirect } from "next/navigation";
import { LoginForm } from "@/components/login-form";
import { safeNextPath } from "@/lib/auth/next-path";
import { currentUser } from "@/lib/auth/page-access";

export const dynamic = "force-dynamic";

export default async function LoginPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const { next } = await searchParams;
  const target = safeNextPath(next);
  if (await currentUser()) redirect(target);
  return (
    <main className="login">
      <h1>Sign in to Tally</h1>
      <LoginForm next={target} />
      <p className="muted">
        Forgot your password? Ask an admin to reset it. With <code>npm start</code>, the demo users’ passwords are
        printed in the terminal.
      </p>
    </main>
  );
}
