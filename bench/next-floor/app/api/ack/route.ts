// The framework floor: a Next.js route that reads the body and answers 200,
// touching nothing else. What Tally's route costs beyond this is ours.
export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<Response> {
  await request.arrayBuffer();
  return new Response('{"received":true}', { headers: { "content-type": "application/json" } });
}
