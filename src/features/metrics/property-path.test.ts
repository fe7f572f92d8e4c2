import { describe, expect, it } from 'vitest';
import { MAX_PROPERTY_PATH_LENGTH, parsePropertyPath, propertyPathProblem, PropertyPathError } from './property-path.js';

describe('parsePropertyPath', () => {
  it.each([
    ['amount', ['amount']],
    ['order.total', ['order', 'total']],
    ['$.order.total', ['order', 'total']],
    ['order["total value"]', ['order', 'total value']],
    ["items['sku']", ['items', 'sku']],
    ["$['a.b'].c", ['a.b', 'c']],
    ['["x"]', ['x']],
    ["a['it\\'s']", ['a', "it's"]],
    ['a["back\\\\slash"]', ['a', 'back\\slash']],
    ['snake_case.kebab-case.v2', ['snake_case', 'kebab-case', 'v2']],
    ['a.b.c.d.e.f.g.h', ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']],
  ])('reads %s as its keys', (path, keys) => {
    expect(parsePropertyPath(path)).toEqual(keys);
  });

  it.each([
    ['', /is empty/],
    ['$', /'\$' alone/],
    ['$amount', /after '\$' comes/],
    ['.amount', /must not start with '.'/],
    ['$..price', /recursive descent/],
    ['order..total', /recursive descent/],
    ['items.*', /wildcards/],
    ['items[*]', /wildcards/],
    ['*', /wildcards/],
    ['items[?(@.price > 10)]', /filters/],
    ['items[(@.length-1)]', /script expressions/],
    ['items[0]', /array indexes and slices/],
    ['items[-1]', /array indexes and slices/],
    ['items[0:2]', /array indexes and slices/],
    ['items[:2]', /array indexes and slices/],
    ['items[sku]', /expected a quoted key/],
    ["items['']", /must not be empty/],
    ["items['sku'", /expected '\]'/],
    ["items['sku", /not closed/],
    ["items['\\n']", /may be escaped/],
    ['order total', /go in brackets/],
    ['order.', /ends where a property name was expected/],
    ['a.b.c.d.e.f.g.h.i', /more than 8 keys/],
    ['a'.repeat(MAX_PROPERTY_PATH_LENGTH + 1), /longer than 256/],
  ])('refuses %j', (path, message) => {
    expect(() => parsePropertyPath(path)).toThrow(PropertyPathError);
    expect(propertyPathProblem(path)).toMatch(message);
  });

  it('names the character where the problem is', () => {
    expect(propertyPathProblem('order.items[0]')).toMatch(/at character 12\)$/);
  });

  it('answers null for a valid path', () => {
    expect(propertyPathProblem('$.order.total')).toBeNull();
  });
});
