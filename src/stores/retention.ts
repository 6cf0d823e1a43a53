/** How long a processed event is remembered by default: a week outlasts the service's whole retry schedule. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 3600_000;
