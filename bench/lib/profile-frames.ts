/** A V8 profile's call frame, as CPU profiles (bench:stalls) and sampling heap profiles (bench:heap-sites) give it. */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** "name src/path.ts:LINE": the frame's function with its file shortened to the project's or a package's path. */
export function frameLabel(frame: CallFrame): string {
  const file = frame.url.replace(/^.*\/(src|node_modules)\//, '$1/');
  return `${frame.functionName || '(anonymous)'}${file ? ` ${file}:${frame.lineNumber + 1}` : ''}`;
}
