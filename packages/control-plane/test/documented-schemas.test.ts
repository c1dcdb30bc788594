import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import {
  documentedAs,
  schemaForDocument,
} from '../src/application/resources/documented-schemas.ts';

describe('schemas documented in full', () => {
  const full = { type: 'object', properties: { a: { type: 'string' } } };
  const loose = documentedAs(Type.Record(Type.String(), Type.Unknown()), full);
  const other = Type.String({ $id: 'Other' });
  const route = { body: Type.Object({ config: loose, other }), response: { 200: other } };

  it('shows the full schema where the loose one is, and leaves the route schema as it was', () => {
    const shown = schemaForDocument(route) as typeof route;
    expect(shown.body.properties.config).toBe(full);
    expect(route.body.properties.config).toBe(loose);
    expect(shown.body.required).toEqual(['config', 'other']);
  });

  it('keeps every part without one the same object', () => {
    const shown = schemaForDocument(route) as typeof route;
    expect(shown.response).toBe(route.response);
    expect(shown.body.properties.other).toBe(other);
    const plain = { body: Type.Object({ name: Type.String() }) };
    expect(schemaForDocument(plain)).toBe(plain);
  });
});
