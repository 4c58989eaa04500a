// Where a list's JSON Lines go (timeline, retweeters): a file, opened before any paid call so that a
// path that cannot be written costs nothing, or stdout. A page is written whole and awaited, so when
// a write fails (a full disk) the file is cut back to its last whole page and the run can go on
// from the page that failed.
import { open, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import { CliError, exitCodes } from './exit-codes.js';

export class PageSink {
  /** Lines written (whole pages). */
  count = 0;
  private constructor(
    readonly path: string | undefined,
    private readonly file: FileHandle | undefined,
    /** The file's size after its last whole page. */
    private size: number,
    private readonly append: boolean,
  ) {}

  /**
   * A sink on `path` (emptied by begin(), or added to with `append`), or on stdout; a usage error
   * (exit 2) if it cannot be written. Opened for adding, so that what fails before begin() (the
   * username's lookup) leaves an existing file as it was.
   */
  static async open(path: string | undefined, append: boolean): Promise<PageSink> {
    if (path === undefined) return new PageSink(undefined, undefined, 0, append);
    let file: FileHandle;
    try {
      file = await open(path, 'a');
    } catch (error) {
      throw new CliError(`Cannot write -o ${path}: ${reason(error)}.`, 'output_unwritable', exitCodes.usage, { path, errno: errnoOf(error) });
    }
    return new PageSink(path, file, (await file.stat()).size, append);
  }

  /** Empties the file unless it is added to, before the first page. */
  async begin(): Promise<void> {
    // A device or a pipe (-o /dev/null) has nothing to empty.
    if (!this.file || this.append || !(await this.file.stat()).isFile()) return;
    await this.file.truncate(0);
    this.size = 0;
  }

  /** Writes a page's items, one JSON line each; a failed write is a WriteFailed, the file cut back to the pages before. */
  async writePage(items: unknown[]): Promise<void> {
    if (items.length === 0) return;
    const text = items.map((i) => `${JSON.stringify(i)}\n`).join('');
    if (!this.file) {
      if (!process.stdout.write(text)) await once(process.stdout, 'drain');
    } else {
      try {
        await this.file.writeFile(text);
      } catch (error) {
        // What the failed write left (part of a line) goes: the file ends on its last whole page.
        await this.file.truncate(this.size).catch(() => undefined);
        throw new WriteFailed(`Could not write to ${this.path}: ${reason(error)}.`, errnoOf(error), this.count);
      }
      this.size += Buffer.byteLength(text);
    }
    this.count += items.length;
  }

  async close(): Promise<void> {
    await this.file?.close().catch(() => undefined);
  }
}

/** Writing the output failed part-way: `written` lines are in the file, whole pages. */
export class WriteFailed extends CliError {
  override name = 'WriteFailed';
  constructor(
    message: string,
    errno: string | undefined,
    readonly written: number,
  ) {
    super(message, 'output_write_failed', exitCodes.failure, { errno, written });
  }
}

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | null)?.code;

/** ENOENT and its meaning, for the message. */
function reason(error: unknown): string {
  const code = errnoOf(error);
  const words: Record<string, string> = { ENOENT: 'no such directory', EISDIR: 'it is a directory', EACCES: 'permission denied', ENOSPC: 'no space left on the device', EROFS: 'a read-only file system', ENOTDIR: 'a part of the path is not a directory' };
  return code ? `${code}${words[code] ? ` (${words[code]})` : ''}` : error instanceof Error ? error.message : String(error);
}
