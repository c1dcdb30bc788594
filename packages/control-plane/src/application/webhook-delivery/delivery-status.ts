/**
 * The life of a delivery (one event to one subscription):
 * `pending` (no attempt yet) → `retrying` (an attempt failed, another is scheduled) →
 * `delivered` (a 2xx came back) or `failed` (the schedule ran out; final).
 */
export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
