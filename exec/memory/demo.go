package memory

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// demoTopic is a family of related memories: its sentences are combined so the
// demo has many distinct but searchable texts.
type demoTopic struct {
	tags      []string
	sources   []string
	openers   []string
	details   []string
	followUps []string
}

var demoTopics = []demoTopic{
	{[]string{"python", "programming"}, []string{"documentation", "notes"},
		[]string{"Python is a high-level, interpreted programming language known for its readability.",
			"Python's virtual environments keep project dependencies apart.",
			"Python type hints are checked by mypy, not at run time."},
		[]string{"List comprehensions are usually faster than explicit loops.",
			"The GIL means threads do not run Python bytecode in parallel.",
			"asyncio suits many slow network calls better than threads."},
		[]string{"Try uv for faster installs.", "Remember to pin versions in requirements.txt.", ""}},
	{[]string{"go", "programming"}, []string{"documentation", "notes", "code-review"},
		[]string{"Go interfaces are satisfied implicitly; declare them where they are consumed.",
			"Go's race detector finds data races only on the paths the tests exercise.",
			"In Go, errors wrap with %w and are inspected with errors.Is and errors.As."},
		[]string{"Table-driven tests keep cases readable.",
			"context.Context carries cancellation, not optional parameters.",
			"A nil map can be read but not written."},
		[]string{"Run go vet before every commit.", "gofmt settles the style debates.", ""}},
	{[]string{"docker", "devops"}, []string{"runbook", "notes"},
		[]string{"Docker containers share the host kernel, unlike virtual machines.",
			"Multi-stage Docker builds keep compilers out of the final image.",
			"docker compose reads .env files for variable substitution."},
		[]string{"Pin base images by digest for reproducible builds.",
			"Prune dangling images weekly to reclaim disk.",
			"Health checks let the orchestrator restart stuck containers."},
		[]string{"See the staging runbook for the registry login.", "", "Ask ops before changing the CI runners."}},
	{[]string{"ml", "tutorial"}, []string{"course", "documentation", "notes"},
		[]string{"Machine learning models overfit when they memorise training noise.",
			"Gradient descent follows the negative gradient of the loss.",
			"Cross-validation estimates how a model generalises to unseen data."},
		[]string{"Regularisation such as L2 shrinks the weights.",
			"Learning-rate schedules often matter more than the optimiser.",
			"Always keep a held-out test set that tuning never touches."},
		[]string{"Week 3 of the course covers decision trees.", "", "Re-run the notebook with a fixed seed."}},
	{[]string{"cooking", "recipe"}, []string{"family", "website"},
		[]string{"Grandma's lentil soup needs a bay leaf and a long simmer.",
			"Sourdough starter wants feeding twice a day at room temperature.",
			"Risotto rice should be toasted before the first ladle of stock."},
		[]string{"Salt the pasta water until it tastes like the sea.",
			"Rest the dough for at least an hour in the fridge.",
			"A squeeze of lemon brightens almost any stew."},
		[]string{"Serves four.", "Double it for the Sunday lunch.", ""}},
	{[]string{"travel"}, []string{"email", "calendar", "notes"},
		[]string{"The train to Lisbon leaves at 08:15 from platform 4.",
			"Hotel check-in in Kyoto is after 15:00; the key box code is in the email.",
			"The passport expires next spring; renew it before booking flights."},
		[]string{"Travel insurance covers cancellations up to 48 hours before departure.",
			"The museum pass includes the old town tram.",
			"Local SIM cards are cheaper than roaming."},
		[]string{"Pack the adapter.", "", "Share the itinerary with Sam."}},
	{[]string{"health", "personal"}, []string{"notes", "calendar"},
		[]string{"Dentist appointment moved to Thursday at 10:30.",
			"The physiotherapist recommended stretching the hamstrings daily.",
			"Allergy season starts in April; refill the antihistamines."},
		[]string{"Drink more water on running days.",
			"Sleep improved after cutting coffee after 2 pm.",
			"Blood test results were normal."},
		[]string{"", "Follow up in three months.", "Bring the referral letter."}},
	{[]string{"finance", "personal"}, []string{"email", "notes", "bank"},
		[]string{"The electricity bill is due on the 12th of every month.",
			"Rent goes up by 3 percent from September.",
			"The tax return deadline is the end of July."},
		[]string{"Set up a standing order for the savings account.",
			"Keep receipts for home-office expenses.",
			"The car insurance renewal quote was higher than last year."},
		[]string{"", "Compare offers before renewing.", "Ask the accountant about deductions."}},
	{[]string{"meeting", "work"}, []string{"calendar", "email", "slack"},
		[]string{"The quarterly planning meeting agreed to ship search before memory.",
			"Standup moved to 9:45 so the Lisbon team can join.",
			"The design review asked for a high-contrast theme."},
		[]string{"Action item: write the migration plan for the audit log.",
			"Decision: approvals default to No on Enter.",
			"Open question: how long should pending approvals wait?"},
		[]string{"Notes shared in the team channel.", "", "Next review in two weeks."}},
	{[]string{"security", "work"}, []string{"runbook", "documentation", "slack"},
		[]string{"Rotate the API keys every ninety days and after anyone leaves.",
			"Private keys never go into the repository; use the secrets manager.",
			"Phishing tests showed that link previews help people spot fakes."},
		[]string{"Audit logs must be append-only and hash-chained.",
			"Leases for agents should expire within minutes.",
			"Mask tokens in every preview before display."},
		[]string{"", "Report incidents in the security channel.", "Review access quarterly."}},
	{[]string{"books", "reading"}, []string{"notes", "website"},
		[]string{"Finished 'The Pragmatic Programmer'; the tracer bullets chapter stuck.",
			"Started a novel about a lighthouse keeper on a remote island.",
			"The library hold for the history of cartography arrived."},
		[]string{"Good quote about broken windows and code rot.",
			"The second half drags but the ending is worth it.",
			"Return by the 20th to avoid the fine."},
		[]string{"", "Recommend to Alex.", "Add to the reading list."}},
	{[]string{"garden", "home"}, []string{"notes", "family"},
		[]string{"Tomatoes need staking once they reach knee height.",
			"The apple tree should be pruned in late winter.",
			"Basil hates the cold; bring it inside below 10 degrees."},
		[]string{"Water deeply twice a week rather than a little every day.",
			"Compost is ready when it smells like forest soil.",
			"Slugs avoid copper tape around the beds."},
		[]string{"", "Order seeds in January.", "Borrow the neighbour's ladder."}},
}

// SeedDemo adds about 300 varied memories to s. The same now gives the same
// memories (texts, tags, sources and dates), so demo screenshots are stable.
func SeedDemo(s *Store, now time.Time) error {
	rng := rand.New(rand.NewPCG(2025, 11))
	var b bytes.Buffer
	seen := map[string]bool{}
	n := 0
	for attempt := 0; n < 300 && attempt < 5000; attempt++ {
		t := demoTopics[rng.IntN(len(demoTopics))]
		text := strings.TrimSpace(strings.Join([]string{
			t.openers[rng.IntN(len(t.openers))],
			t.details[rng.IntN(len(t.details))],
			t.followUps[rng.IntN(len(t.followUps))],
		}, " "))
		if seen[text] {
			continue
		}
		seen[text] = true
		tags := append([]string(nil), t.tags...)
		if rng.IntN(4) == 0 {
			tags = append(tags, []string{"important", "todo", "archive", "idea"}[rng.IntN(4)])
		}
		if rng.IntN(10) == 0 {
			tags = nil // some memories have no tags at all
		}
		created := now.UTC().Add(-time.Duration(rng.IntN(400*24*60)) * time.Minute).Truncate(time.Minute)
		line := map[string]any{
			"text":       text,
			"tags":       tags,
			"source":     t.sources[rng.IntN(len(t.sources))],
			"created_at": created.Format(time.RFC3339),
		}
		if err := jsonLine(&b, line); err != nil {
			return err
		}
		n++
	}
	// A long memory shows the 200-character preview and the detail view's wrapping.
	long := strings.Repeat("This is a deliberately long memory about the Vigil demo, written so the preview has to cut it. ", 6)
	if err := jsonLine(&b, map[string]any{"text": long, "tags": []string{"demo", "long"}, "source": "notes",
		"created_at": now.UTC().Format("2006-01-02")}); err != nil {
		return err
	}
	if _, err := s.Import(context.Background(), &b); err != nil {
		return fmt.Errorf("seeding demo memories: %w", err)
	}
	return nil
}
