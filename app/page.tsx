// The front door: signed-in people land on their first tenant's overview.
import Link from "next/link";
import { redirect } from "next/navigation";
import { visibleTenants } from "@/lib/auth/access";
import { requireUser } from "@/lib/auth/page-access";
import { SignOutButton } from "@/components/sign-out-button";
import { Providers } from "@/components/providers";

export const dynamic = "force-dynamic";

export default async function Home() {
  const user = await requireUser("/");
  const tenants = await visibleTenants(user);
  if (tenants.length > 0) redirect(`/t/${tenants[0]!.slug}`);
  return (
    <Providers csrfToken={user.csrfToken}>
      <main className="login">
        <h1>No tenants to show</h1>
        {user.role === "admin" ? (
          <p>
            There are no tenants yet. Create one with{" "}
            <code>npm run tally -- tenant add --slug acme --name &quot;Acme&quot;</code>, then reload.
          </p>
        ) : (
          <p>You are not a member of any tenant yet. Ask an admin to add you to one.</p>
        )}
        <p>
          Signed in as {user.email}. <SignOutButton />
        </p>
        <p>
          <Link href="/">Reload</Link>
        </p>
      </main>
    </Providers>
  );
}
