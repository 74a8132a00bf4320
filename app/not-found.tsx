// 404: unknown pages, records, and tenants the reader may not see (which are not told apart).
import Link from "next/link";

export default function NotFound() {
  return (
    <main className="login">
      <h1>Not found</h1>
      <p>
        There is nothing here, or it belongs to a tenant you are not a member of. Check the address, or go back to{" "}
        <Link href="/">your tenants</Link>.
      </p>
    </main>
  );
}
