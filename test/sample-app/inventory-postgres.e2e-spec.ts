import { describeInventory } from './inventory-suite';

// PG_URL=postgres://... uses a running server; otherwise a throw-away one is started.
describe('sample inventory app, three instances on PostgreSQL', () => {
  describeInventory('postgres');
});
