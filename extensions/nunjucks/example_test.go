package nunjucks_test

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge/extensions/nunjucks"
)

func Example() {
	tpl, err := nunjucks.Parse(`{"host": {{ server.hostname | dump }}, "cores": {{ server.cpus * 2 }}, "rack": "{{ server.rack }}"}`)
	if err != nil {
		panic(err)
	}
	data, err := nunjucks.FromJSON([]byte(`{"server": {"hostname": "node-7", "cpus": 16, "rack": null}}`))
	if err != nil {
		panic(err)
	}
	out, err := tpl.Render(context.Background(), data.(*nunjucks.Object), nunjucks.Options{})
	fmt.Println(out, err)

	// Strict mode refuses a value that is not there.
	_, err = tpl.Render(context.Background(), data.(*nunjucks.Object), nunjucks.Options{Strict: true})
	fmt.Println(err)
	tpl, _ = nunjucks.Parse(`ping -c1 {{ server.hostnme }}`)
	_, err = tpl.Render(context.Background(), data.(*nunjucks.Object), nunjucks.Options{Strict: true})
	fmt.Println(err)
	// Output:
	// {"host": "node-7", "cores": 32, "rack": ""} <nil>
	// <nil>
	// line 1, column 13: server.hostnme is undefined (strict mode refuses undefined values)
}
