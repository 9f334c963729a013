package icebergcli

import (
	"testing"

	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/export/iceberg"
)

// TestConfigDefaultsAreIcebergs: config's table, which cannot import
// export/iceberg, states the catalog's defaults; they must be the ones
// export/iceberg means.
func TestConfigDefaultsAreIcebergs(t *testing.T) {
	c := config.Default()
	mode, err := iceberg.ParseCommitMode(c.IcebergCommit)
	if c.IcebergCatalog != iceberg.KindSQL || c.IcebergNamespace != iceberg.DefaultNamespace || err != nil || mode != iceberg.CommitAtomic {
		t.Errorf("config's defaults: catalog %q, namespace %q, commit %q (%v); export/iceberg's: %q, %q, %q",
			c.IcebergCatalog, c.IcebergNamespace, c.IcebergCommit, err, iceberg.KindSQL, iceberg.DefaultNamespace, iceberg.CommitAtomic)
	}
}
