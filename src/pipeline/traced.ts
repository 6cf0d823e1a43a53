import { TRACE_ATTRIBUTE, type TraceSpan } from '../contract/tracing.js';

/**
 * The spans of a walk's stages, used only when the receiver has a `tracing` option: a walk without one never
 * calls these, and pays a single check per stage.
 */

/**
 * Ends a stage's span with how the stage ended: `outcome` names a rejection's reason or an acknowledgement
 * (`duplicate`, `accepted`) and is undefined when the walk goes on; `failing` outcomes (every one without it)
 * mark the span failed.
 */
export function endStage(
  span: TraceSpan,
  outcome: string | undefined,
  failing?: (outcome: string) => boolean,
) {
  if (span.recording !== false && outcome !== undefined) {
    span.setAttributes({ [TRACE_ATTRIBUTE.outcome]: outcome });
    if (failing === undefined || failing(outcome)) span.fail(outcome);
  }
  span.end();
}

/**
 * The `handler` span around a run of an event's handlers: active while they run, so the spans a handler
 * starts itself nest under it; a failure is recorded on it (the handler's error, its type and message).
 */
export function traceHandlers<A>(
  parent: TraceSpan,
  dispatch: (arg: A) => Promise<void> | undefined,
): (arg: A) => Promise<void> | undefined {
  // A delivery the sampler dropped: no span of its own, only its context around the handlers.
  if (parent.recording === false) return (arg) => parent.inContext(() => dispatch(arg));
  return (arg) => {
    const span = parent.child('handler');
    let handled: Promise<void> | undefined;
    try {
      handled = span.inContext(() => dispatch(arg));
    } catch (error) {
      handled = Promise.reject(error);
    }
    if (handled === undefined) {
      span.end();
      return undefined;
    }
    return handled.then(
      () => span.end(),
      (error: unknown) => {
        span.fail('handler_failed', error);
        span.end();
        throw error;
      },
    );
  };
}
