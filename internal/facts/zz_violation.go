package facts

// Deliberate violation, reverted in the next commit.
import _ "github.com/fastpath-dev/fastpath/internal/kb"
