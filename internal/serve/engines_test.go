package serve_test

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/serve"
	"github.com/wirespeed/wirespeed/internal/serve/servetest"
)

func TestServeEngines(t *testing.T) { servetest.Run(t, serve.Builtin()) }
