// The measured Worker: the receiver with the default events behind the Fetch adapter, as a Worker ships it.
import { createReceiver } from 'messaging-webhooks';
import { createFetchHandler } from 'messaging-webhooks/fetch';

let handle;

export default {
  fetch(request, env, ctx) {
    handle ??= createFetchHandler(() => {
      const receiver = createReceiver({ secrets: env.WEBHOOK_SECRET });
      receiver.on('message.delivered', (event) => console.log(`${event.data.message_id} delivered`));
      return receiver;
    });
    return handle(request, ctx);
  },
};
