package memory

import "context"

// Find answers a listing: with a query it is SearchMemory (best first, each
// hit with its score); without one the memories passing the filters, newest
// first (then highest id), with no score, since nothing was ranked. At most
// req.Limit are returned.
func (s *Store) Find(ctx context.Context, req Request) ([]Hit, error) {
	if req.Query != "" {
		return s.SearchMemory(ctx, req)
	}
	mems, _, err := s.List(ctx, req.Filters, req.Limit, nil)
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, len(mems))
	for i, m := range mems {
		hits[i] = Hit{Memory: m}
	}
	return hits, nil
}
