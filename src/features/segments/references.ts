/**
 * Checks on the segment references of a rule about to be saved: they must name existing
 * segments, and saving must not close a cycle or push any chain of references past the nesting
 * the evaluator follows. Pure: the caller passes every stored rule of the workspace.
 */
import {
  AUDIENCE_LIMITS,
  collectSegmentKeys,
  findSegmentReferenceProblem,
  type AudienceExpression,
  type SegmentReferenceProblem,
} from '../assignment/audience.js';
import type { FieldError } from '../../http/problems.js';

export type SegmentRules = ReadonlyMap<string, AudienceExpression | null>;

interface ReferenceSite {
  key: string;
  /** JSON Pointer of the `segment` member, relative to the rule. */
  pointer: string;
}

/** Every `{segment}` node of the tree with its location, depth-first in operand order. */
export function segmentReferenceSites(tree: AudienceExpression | null): ReferenceSite[] {
  const sites: ReferenceSite[] = [];
  const visit = (node: AudienceExpression, pointer: string): void => {
    if ('segment' in node) {
      sites.push({ key: node.segment, pointer: `${pointer}/segment` });
    } else if ('operator' in node) {
      node.operands.forEach((operand, index) => visit(operand, `${pointer}/operands/${index}`));
    }
  };
  if (tree !== null) visit(tree, '');
  return sites;
}

/**
 * Field errors (pointers under `/rule`) for saving `rule` as segment `key`, given the stored
 * rules of the workspace (the segment's own old rule included or not: it is replaced).
 */
export function segmentReferenceErrors(key: string, rule: AudienceExpression | null, stored: SegmentRules): FieldError[] {
  const sites = segmentReferenceSites(rule);
  const unknown = sites.filter((site) => site.key !== key && !stored.has(site.key));
  if (unknown.length > 0) {
    return unknown.map((site) => ({ pointer: `/rule${site.pointer}`, message: `no segment with key "${site.key}" exists in this workspace` }));
  }
  const resolve = (candidate: string) => (candidate === key ? rule : stored.get(candidate));
  // A cycle through `key` shows from `key` itself; a chain made too deep may start at any segment
  // that (transitively) refers to `key`, so those are checked as roots too.
  for (const root of [key, ...referrersOf(key, stored, rule)]) {
    const problem = findSegmentReferenceProblem(root, resolve);
    if (problem && problem.kind !== 'unknown_segment' && problem.path.includes(key)) {
      return [{ pointer: pointerFor(problem, key, sites), message: describe(problem, key) }];
    }
  }
  return [];
}

/** Keys of the segments whose rules reach `key` through references, nearest first. */
function referrersOf(key: string, stored: SegmentRules, rule: AudienceExpression | null): string[] {
  const referencedBy = new Map<string, string[]>();
  const keys = new Set([...stored.keys(), key]);
  for (const from of keys) {
    for (const to of collectSegmentKeys(from === key ? rule : stored.get(from))) {
      referencedBy.set(to, [...(referencedBy.get(to) ?? []), from]);
    }
  }
  const found = new Set<string>();
  const queue = [key];
  for (let current = queue.shift(); current !== undefined; current = queue.shift()) {
    for (const referrer of referencedBy.get(current) ?? []) {
      if (referrer === key || found.has(referrer)) continue;
      found.add(referrer);
      queue.push(referrer);
    }
  }
  return [...found];
}

/** Points at the reference in the saved rule that continues the offending chain. */
function pointerFor(problem: SegmentReferenceProblem, key: string, sites: ReferenceSite[]): string {
  const next = problem.path[problem.path.indexOf(key) + 1];
  const site = sites.find((candidate) => candidate.key === next);
  return site ? `/rule${site.pointer}` : '/rule';
}

function describe(problem: SegmentReferenceProblem, key: string): string {
  const chain = problem.path.join(' → ');
  if (problem.kind === 'cycle') {
    const next = problem.path[problem.path.indexOf(key) + 1] ?? key;
    return `referring to segment "${next}" would create a cycle: ${chain}`;
  }
  return `segment references would nest ${problem.path.length} levels deep (${chain}); at most ${AUDIENCE_LIMITS.maxSegmentNesting} are followed`;
}
