import { Dashboard } from "../components/dashboard";

export default async function Home({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { address } = await searchParams;
  return (
    <main>
      <header className="masthead">
        <h1>Tollgate</h1>
        <p>
          Keys, budgets and payment intents of a wallet on this gateway. The gateway itself answers beside this page: <a href="/openapi.json">/openapi.json</a>,{" "}
          <a href="/v1/models">/v1/models</a>.
        </p>
      </header>
      <Dashboard initialAddress={typeof address === "string" ? address : ""} />
    </main>
  );
}
