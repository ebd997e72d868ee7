package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/hostforge/hostforge/adapters/webhook"
	"github.com/hostforge/hostforge/extensions"
)

// A webhook task delivered to a receiver: the delivery ID travels as
// webhook-id, and the record says how the receiver answered.
func ExampleRunner_Run() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("receiver got webhook-id", r.Header.Get("webhook-id"))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()

	r, err := webhook.New(webhook.Config{})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	res, err := r.Run(context.Background(), extensions.Request{
		DeliveryID: extensions.DeliveryID("serverRegistered/cpu-r1-u10/node-1", "notify", "hook"),
		Extension:  "notify", Task: "hook", TaskType: extensions.TaskWebhook,
		Webhook: &extensions.WebhookOptions{Endpoint: srv.URL + "/enrolled", Method: "POST"},
		Body:    `{"serial": "6SBT0R3"}`,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Replace(strings.SplitN(res.Message, "\n", 2)[0], srv.URL, "http://receiver", 1))
	// Output:
	// receiver got webhook-id c698ce4e-7c28-8cac-974d-ab57cbb7aa83
	// POST http://receiver/enrolled answered 202 Accepted (attempt 1 of 1)
}
