// Every route, listed by hand: a reader follows the imports, no directory scanning.
import type { App } from '../http/types.js';
import type { Deps } from '../wiring/deps.js';
import { registerAccount } from './account/account.js';
import { registerApiKeyRoutes } from './account/api-keys.js';
import { registerCreditsBalance } from './account/credits-balance.js';
import { registerPlans } from './account/plans.js';
import { registerUsage } from './account/usage.js';
import { registerUsageSummary } from './account/usage-summary.js';
import { registerBulkExportRoutes } from './bulk-export/index.js';
import { registerDashboard } from './dashboard.js';
import { registerEchoHello } from './echo/hello.js';
import { registerSocialRoutes } from './social/index.js';
import { registerHealthRoutes } from './system/health.js';
import { registerLanding } from './system/landing.js';
import { registerWalletBalance } from './wallet/balance.js';

export function registerRoutes(app: App, deps: Deps): void {
  registerHealthRoutes(app, deps);
  registerLanding(app);
  registerDashboard(app);
  registerCreditsBalance(app, deps);
  registerApiKeyRoutes(app, deps);
  registerPlans(app, deps);
  registerUsage(app, deps);
  registerUsageSummary(app, deps);
  registerAccount(app, deps);
  registerSocialRoutes(app, deps);
  registerBulkExportRoutes(app, deps);
  registerEchoHello(app);
  registerWalletBalance(app, deps);
}
