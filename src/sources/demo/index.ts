// The demo network's public surface.
export { DemoSource, type DemoSourceOptions } from './demo-source.js';
export { demoSample, type DemoSampleResult } from './sample.js';
