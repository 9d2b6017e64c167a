import type { Metadata } from "next";
import type { ReactNode } from "react";
import "./globals.css";
import "./dashboard.css";

export const metadata: Metadata = {
  title: "Tollgate dashboard",
  description: "Spend, keys, budgets and payment intents of a wallet on this Tollgate gateway.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
