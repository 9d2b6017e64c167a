import { Dashboard } from "../components/dashboard";

export default function Home() {
  return (
    <main>
      <header className="masthead">
        <h1>Tollgate</h1>
        <p>
          Spend, keys, budgets and payment intents of your wallet on this gateway. The gateway itself answers beside this page:{" "}
          <a href="/openapi.json">/openapi.json</a>, <a href="/v1/models">/v1/models</a>.
        </p>
      </header>
      <Dashboard />
    </main>
  );
}
