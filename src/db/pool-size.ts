/** A process's Postgres pool when nothing says otherwise: DATABASE_POOL_SIZE's default (config.ts) and openStore's. */
export const DEFAULT_POOL_SIZE = 10;
