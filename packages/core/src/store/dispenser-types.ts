/** The dispenser part of the Store. */

/** dispenser persistence. Every guarded method is a single native atomic operation. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface DispenserStore {}
