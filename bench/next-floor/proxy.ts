// Never runs (its matcher matches no route). Next.js 16 otherwise took the
// repository's proxy.ts for the floor's, and that one imports the product's
// database code, which the floor neither has nor should pay for.
import { NextResponse } from "next/server";

export function proxy() {
  return NextResponse.next();
}

export const config = { matcher: "/__never__" };
