import { describeInventory } from './inventory-suite';

describe('sample inventory app, three instances on one SQLite file', () => {
  describeInventory('sqlite');
});
