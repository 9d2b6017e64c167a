"use client";
/**
 * A key's change history (`GET /api/keys/{keyId}/events`), newest first: what changed, from what
 * to what, when and by whom. Read again whenever `version` changes (after a save or a rotation);
 * "Show older changes" follows `next_cursor`.
 */
import { useEffect, useId, useRef, useState } from "react";
import { actionError } from "../lib/api";
import { formatInstant } from "../lib/format";
import { fetchKeyEvents, type KeyEvent } from "../lib/key-admin";
import { actorLabel, changeLines, eventTitle } from "../lib/key-events";

type View =
  | { state: "loading" }
  | { state: "error"; message: string }
  | { state: "ready"; events: KeyEvent[]; nextCursor: string | null; loadingMore: boolean; moreError?: string };

/** Props of {@link KeyHistory}. */
export interface KeyHistoryProps {
  keyId: string;
  /** Any change reloads the first page. */
  version: number;
  onSessionEnded: () => void;
}

function EventItem({ event, keyId }: { event: KeyEvent; keyId: string }) {
  const lines = changeLines(event);
  return (
    <li className="event">
      <p className="event-head">
        <strong>{eventTitle(event)}</strong> <time dateTime={new Date(event.at).toISOString()}>{formatInstant(event.at)}</time> by{" "}
        <code>{actorLabel(event.actor, keyId)}</code>
      </p>
      {lines.length > 0 && (
        <ul className="changes">
          {lines.map((line) => (
            <li key={line.field}>
              <span className="field-name">{line.label}</span>: {line.from} → {line.to}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** See the file comment. */
export function KeyHistory({ keyId, version, onSessionEnded }: KeyHistoryProps) {
  const base = useId();
  const [view, setView] = useState<View>({ state: "loading" });
  const signal = useRef<AbortSignal | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    signal.current = controller.signal;
    setView((v) => (v.state === "ready" ? v : { state: "loading" }));
    fetchKeyEvents(keyId, null, controller.signal).then(
      (page) => !controller.signal.aborted && setView({ state: "ready", events: page.events, nextCursor: page.next_cursor, loadingMore: false }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        const message = actionError(error, onSessionEnded);
        if (message !== undefined) setView({ state: "error", message });
      },
    );
    return () => controller.abort();
  }, [keyId, version, onSessionEnded]);

  async function loadOlder() {
    const current = signal.current;
    if (view.state !== "ready" || !view.nextCursor || !current) return;
    setView({ ...view, loadingMore: true, moreError: undefined });
    try {
      const page = await fetchKeyEvents(keyId, view.nextCursor, current);
      if (!current.aborted) setView({ state: "ready", events: [...view.events, ...page.events], nextCursor: page.next_cursor, loadingMore: false });
    } catch (error) {
      if (current.aborted) return;
      const message = actionError(error, onSessionEnded);
      if (message !== undefined) setView({ ...view, loadingMore: false, moreError: message });
    }
  }

  return (
    <section className="history" aria-labelledby={`${base}-title`} aria-busy={view.state === "loading"}>
      <h4 id={`${base}-title`}>Change history</h4>
      {view.state === "loading" && <p className="status">Loading the key&apos;s changes…</p>}
      {view.state === "error" && (
        <div className="error" role="alert">
          <strong>Could not load the history.</strong> {view.message}
        </div>
      )}
      {view.state === "ready" &&
        (view.events.length === 0 ? (
          <p className="empty">No changes yet: the key is as it was created.</p>
        ) : (
          <ol className="events" aria-labelledby={`${base}-title`}>
            {view.events.map((event) => (
              <EventItem key={event.eventId} event={event} keyId={keyId} />
            ))}
          </ol>
        ))}
      {view.state === "ready" && view.nextCursor && (
        <button type="button" className="secondary small" onClick={() => void loadOlder()} disabled={view.loadingMore}>
          {view.loadingMore ? "Loading…" : "Show older changes"}
        </button>
      )}
      {view.state === "ready" && view.moreError && (
        <p className="error" role="alert">
          {view.moreError}
        </p>
      )}
    </section>
  );
}
