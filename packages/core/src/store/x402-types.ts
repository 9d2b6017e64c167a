/** The x402 part of the Store. */

/** x402 persistence. Every guarded method is a single native atomic operation. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PaymentNonceStore {}
