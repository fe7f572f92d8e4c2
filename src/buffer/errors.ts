/**
 * The buffer's store cannot be reached (Redis down, a writer thread gone). Apart from types.ts so
 * the database's dialect can name it without importing the buffer's contract, which imports the
 * database.
 */
export class BufferUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BufferUnavailableError';
  }
}
