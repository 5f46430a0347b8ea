/** The demo's live display: step lines, and a progress bar per run (plain lines when not a TTY). */
export class Progress {
  private barOpen = false;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {}

  step(message: string): void {
    this.clearBar();
    this.out.write(`- ${message}\n`);
  }

  /** Returns the callback to give sendOrders. */
  bar(label: string, total: number): (done: number, accepted: number, rejected: number) => void {
    let lastDraw = 0;
    let lastQuarter = 0;
    return (done, accepted, rejected) => {
      const text = `${label} ${renderBar(done, total)} ${done}/${total}  accepted ${accepted}  rejected ${rejected}`;
      if (this.out.isTTY) {
        const now = Date.now();
        if (done < total && now - lastDraw < 50) return;
        lastDraw = now;
        this.out.write(`\r${text}\x1b[K`);
        this.barOpen = true;
        if (done === total) this.clearBar();
        return;
      }
      const quarter = Math.floor((done / total) * 4);
      if (quarter > lastQuarter || done === total) {
        lastQuarter = quarter;
        this.out.write(`  ${text}\n`);
      }
    };
  }

  private clearBar(): void {
    if (!this.barOpen) return;
    this.out.write('\n');
    this.barOpen = false;
  }
}

export function renderBar(done: number, total: number, width = 24): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}
