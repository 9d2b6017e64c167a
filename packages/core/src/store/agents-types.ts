/** The agents part of the Store. */

/** agents persistence. Every guarded method is a single native atomic operation. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AgentStore {}
