import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

// zod/mini loads no locale: without one, every issue reads "Invalid input", naming no bound or format.
// Each module that parses with zod imports this one (the registries through json-schema.ts), so it
// runs once, before any parse.
z.config(en());
