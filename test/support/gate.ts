/** A promise with its resolve exposed: holds a handler (or a step of a test) open until the test opens it. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}
