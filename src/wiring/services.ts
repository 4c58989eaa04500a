// Domain services that routes use, grouped so tests can hand routes fakes.
export interface Services {
  /** Filled in as parts of the product are added. */
  startedAt: Date;
}
