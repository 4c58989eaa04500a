import { FormatRegistry } from '@sinclair/typebox';

// TypeBox checks (tests, the response check) know no formats until told; Fastify's ajv has its own.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => ISO_DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)));
