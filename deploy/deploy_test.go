package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/store"
)

// The template is read as plain JSON: CloudFormation is case-sensitive and
// rejects unknown properties, so every lookup below is by exact key.

const templateFile = "fundsvc.cfn.json"

// Canonical spellings of the ARNs the policies may name; see canonical.
const (
	tableARN     = "${Table.Arn}"
	indexesARN   = "${Table.Arn}/index/*"
	bucketARN    = "arn:${AWS::Partition}:s3:::${ExportBucketName}"
	exportObject = "arn:${AWS::Partition}:s3:::${ExportBucketName}/${ExportPrefix}"
)

// check inspects a decoded template and returns what is wrong with it.
type check struct {
	name string
	run  func(tpl map[string]any) []string
}

var checks = []check{
	{"the template is well formed and says how transactions are authorized", checkBasics},
	{"the table is the one store.TableDefinition describes", checkTableMatchesDefinition},
	{"the table is protected and expires idempotency records", checkTableProtection},
	{"the service policy never allows a Scan and denies it explicitly", checkServiceNeverScans},
	{"the service policy grants exactly what the service calls", checkServiceLeastPrivilege},
	{"the exporter policy scans the table and writes under the export prefix only", checkExporterConfined},
	{"the export prefix cannot widen the exporter's grants", checkExportPrefixParameter},
	{"every Ref, GetAtt and Sub names a parameter, resource or attribute that exists", checkReferences},
	{"the outputs give the table's name and ARN and both policy ARNs", checkOutputs},
}

func TestTemplate(t *testing.T) {
	tpl := loadTemplate(t)
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range c.run(tpl) {
				t.Error(p)
			}
		})
	}
}

// TestChecksCatchMistakes proves that each check can fail: every mutation of
// the template is a mistake that the named check must report.
func TestChecksCatchMistakes(t *testing.T) {
	mutations := []struct {
		name   string
		check  func(map[string]any) []string
		mutate func(tpl map[string]any)
	}{
		{"GSI2 projects keys only", checkTableMatchesDefinition, func(tpl map[string]any) {
			obj(gsis(tpl)[1], "Projection")["ProjectionType"] = "KEYS_ONLY"
		}},
		{"GSI1 is missing", checkTableMatchesDefinition, func(tpl map[string]any) {
			tableProps(tpl)["GlobalSecondaryIndexes"] = gsis(tpl)[1:]
		}},
		{"GSI1 is keyed by the table's keys", checkTableMatchesDefinition, func(tpl map[string]any) {
			obj(gsis(tpl)[0])["KeySchema"] = tableProps(tpl)["KeySchema"]
		}},
		{"the sort key comes first", checkTableMatchesDefinition, func(tpl map[string]any) {
			ks := list(tableProps(tpl)["KeySchema"])
			ks[0], ks[1] = ks[1], ks[0]
		}},
		{"GSI2SK is a number", checkTableMatchesDefinition, func(tpl map[string]any) {
			obj(list(tableProps(tpl)["AttributeDefinitions"])[5])["AttributeType"] = "N"
		}},
		{"an extra attribute is defined", checkTableMatchesDefinition, func(tpl map[string]any) {
			p := tableProps(tpl)
			p["AttributeDefinitions"] = append(list(p["AttributeDefinitions"]), map[string]any{"AttributeName": "Type", "AttributeType": "S"})
		}},
		{"billing is provisioned", checkTableMatchesDefinition, func(tpl map[string]any) {
			tableProps(tpl)["BillingMode"] = "PROVISIONED"
		}},
		{"a property name is misspelled in case", checkTableMatchesDefinition, func(tpl map[string]any) {
			p := tableProps(tpl)
			p["Keyschema"] = p["KeySchema"]
			delete(p, "KeySchema")
		}},
		{"point-in-time recovery is off", checkTableProtection, func(tpl map[string]any) {
			obj(tableProps(tpl), "PointInTimeRecoverySpecification")["PointInTimeRecoveryEnabled"] = false
		}},
		{"encryption is with an AWS owned key", checkTableProtection, func(tpl map[string]any) {
			tableProps(tpl)["SSESpecification"] = map[string]any{"SSEEnabled": false}
		}},
		{"deletion protection is not set", checkTableProtection, func(tpl map[string]any) {
			delete(tableProps(tpl), "DeletionProtectionEnabled")
		}},
		{"the stack deletes the table with it", checkTableProtection, func(tpl map[string]any) {
			obj(tpl, "Resources", "Table")["DeletionPolicy"] = "Delete"
		}},
		{"TTL is on another attribute", checkTableProtection, func(tpl map[string]any) {
			obj(tableProps(tpl), "TimeToLiveSpecification")["AttributeName"] = "ttl"
		}},
		{"the service may do anything on DynamoDB", checkServiceNeverScans, func(tpl map[string]any) {
			addAction(policyStatements(tpl, "ServicePolicy")[0], "dynamodb:*")
		}},
		{"the service may Scan", checkServiceNeverScans, func(tpl map[string]any) {
			addAction(policyStatements(tpl, "ServicePolicy")[1], "dynamodb:Scan")
		}},
		{"the service may do whatever begins with S", checkServiceNeverScans, func(tpl map[string]any) {
			addAction(policyStatements(tpl, "ServicePolicy")[0], "DynamoDB:S*")
		}},
		{"the service may run PartiQL SELECTs", checkServiceNeverScans, func(tpl map[string]any) {
			addAction(policyStatements(tpl, "ServicePolicy")[1], "dynamodb:PartiQLSelect")
		}},
		{"the deny leaves PartiQL SELECTs out", checkServiceNeverScans, func(tpl map[string]any) {
			obj(policyStatements(tpl, "ServicePolicy")[2])["Action"] = "dynamodb:Scan"
		}},
		{"the service is allowed everything but PutItem", checkServiceNeverScans, func(tpl map[string]any) {
			st := obj(policyStatements(tpl, "ServicePolicy")[0])
			delete(st, "Action")
			st["NotAction"] = "dynamodb:PutItem"
		}},
		{"the Scan deny is gone", checkServiceNeverScans, func(tpl map[string]any) {
			doc := obj(tpl, "Resources", "ServicePolicy", "Properties", "PolicyDocument")
			doc["Statement"] = policyStatements(tpl, "ServicePolicy")[:2]
		}},
		{"the Scan deny applies only on a condition", checkServiceNeverScans, func(tpl map[string]any) {
			obj(policyStatements(tpl, "ServicePolicy")[2])["Condition"] = map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}}
		}},
		{"the Scan deny leaves the indexes out", checkServiceNeverScans, func(tpl map[string]any) {
			obj(policyStatements(tpl, "ServicePolicy")[2])["Resource"] = map[string]any{"Fn::GetAtt": []any{"Table", "Arn"}}
		}},
		{"the service may Query every table", checkServiceLeastPrivilege, func(tpl map[string]any) {
			obj(policyStatements(tpl, "ServicePolicy")[1])["Resource"] = "*"
		}},
		{"the service may GetItem on the indexes", checkServiceLeastPrivilege, func(tpl map[string]any) {
			addAction(policyStatements(tpl, "ServicePolicy")[1], "dynamodb:GetItem")
		}},
		{"the service may not ConditionCheckItem", checkServiceLeastPrivilege, func(tpl map[string]any) {
			st := obj(policyStatements(tpl, "ServicePolicy")[0])
			st["Action"] = slices.DeleteFunc(list(st["Action"]), func(a any) bool { return a == "dynamodb:ConditionCheckItem" })
		}},
		{"the service may delete the table", checkServiceLeastPrivilege, func(tpl map[string]any) {
			addAction(policyStatements(tpl, "ServicePolicy")[0], "dynamodb:DeleteTable")
		}},
		{"the exporter may write anywhere in the bucket", checkExporterConfined, func(tpl map[string]any) {
			obj(policyStatements(tpl, "ExporterPolicy")[1])["Resource"] = map[string]any{"Fn::Sub": "arn:${AWS::Partition}:s3:::${ExportBucketName}/*"}
		}},
		{"the exporter may list the whole bucket", checkExporterConfined, func(tpl map[string]any) {
			delete(obj(policyStatements(tpl, "ExporterPolicy")[2]), "Condition")
		}},
		{"the exporter may list another prefix", checkExporterConfined, func(tpl map[string]any) {
			obj(policyStatements(tpl, "ExporterPolicy")[2], "Condition", "StringLike")["s3:prefix"] = []any{"*"}
		}},
		{"the exporter may write items beyond its lease", checkExporterConfined, func(tpl map[string]any) {
			delete(obj(policyStatements(tpl, "ExporterPolicy")[4]), "Condition")
		}},
		{"the exporter may write items", checkExporterConfined, func(tpl map[string]any) {
			addAction(policyStatements(tpl, "ExporterPolicy")[0], "dynamodb:PutItem")
		}},
		{"the exporter may scan the indexes", checkExporterConfined, func(tpl map[string]any) {
			st := obj(policyStatements(tpl, "ExporterPolicy")[0])
			st["Resource"] = append(list(st["Resource"]), map[string]any{"Fn::Sub": "${Table.Arn}/index/*"})
		}},
		{"the exporter may do anything on S3 under the prefix", checkExporterConfined, func(tpl map[string]any) {
			addAction(policyStatements(tpl, "ExporterPolicy")[1], "s3:*")
		}},
		{"the export prefix may be empty", checkExportPrefixParameter, func(tpl map[string]any) {
			obj(tpl, "Parameters", "ExportPrefix")["AllowedPattern"] = "^.*$"
		}},
		{"the export prefix may hold a wildcard", checkExportPrefixParameter, func(tpl map[string]any) {
			obj(tpl, "Parameters", "ExportPrefix")["AllowedPattern"] = "^[A-Za-z0-9*/]+/$"
		}},
		{"a Ref names a missing parameter", checkReferences, func(tpl map[string]any) {
			tableProps(tpl)["TableName"] = map[string]any{"Ref": "TableNmae"}
		}},
		{"a Sub names a missing resource", checkReferences, func(tpl map[string]any) {
			obj(policyStatements(tpl, "ServicePolicy")[1])["Resource"] = map[string]any{"Fn::Sub": "${Tabel.Arn}/index/*"}
		}},
		{"a GetAtt names a missing attribute", checkReferences, func(tpl map[string]any) {
			obj(tpl, "Outputs", "TableArn")["Value"] = map[string]any{"Fn::GetAtt": []any{"Table", "ARN"}}
		}},
		{"an IAM policy variable is not escaped in a Sub", checkReferences, func(tpl map[string]any) {
			obj(policyStatements(tpl, "ExporterPolicy")[1])["Resource"] = map[string]any{"Fn::Sub": "arn:${AWS::Partition}:s3:::${ExportBucketName}/${aws:username}/*"}
		}},
		{"an intrinsic function is misspelled", checkReferences, func(tpl map[string]any) {
			obj(policyStatements(tpl, "ServicePolicy")[1])["Resource"] = map[string]any{"Fn:Sub": "${Table.Arn}/index/*"}
		}},
		{"the table ARN is not an output", checkOutputs, func(tpl map[string]any) {
			delete(obj(tpl, "Outputs"), "TableArn")
		}},
		{"the service policy output is the exporter's", checkOutputs, func(tpl map[string]any) {
			obj(tpl, "Outputs", "ServicePolicyArn")["Value"] = map[string]any{"Ref": "ExporterPolicy"}
		}},
		{"the description does not say how transactions are authorized", checkBasics, func(tpl map[string]any) {
			tpl["Description"] = "fundsvc"
		}},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			tpl := loadTemplate(t)
			m.mutate(tpl)
			if problems := m.check(tpl); len(problems) == 0 {
				t.Error("the check passed a template with this mistake")
			}
		})
	}
}

func loadTemplate(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(templateFile)
	if err != nil {
		t.Fatal(err)
	}
	var tpl map[string]any
	if err := json.Unmarshal(b, &tpl); err != nil {
		t.Fatalf("%s is not JSON: %v", templateFile, err)
	}
	return tpl
}

// problems collects what a check finds.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// onlyKeys reports keys of m outside allowed: CloudFormation fails on them,
// and encoding/json's case-insensitive matching would not.
func (p *problems) onlyKeys(where string, m map[string]any, allowed ...string) {
	for k := range m {
		if !slices.Contains(allowed, k) {
			p.addf("%s: unknown key %q (want one of %s)", where, k, strings.Join(allowed, ", "))
		}
	}
}

func checkBasics(tpl map[string]any) []string {
	var p problems
	p.onlyKeys("template", tpl, "AWSTemplateFormatVersion", "Description", "Metadata", "Parameters", "Mappings", "Conditions", "Transform", "Resources", "Outputs")
	if tpl["AWSTemplateFormatVersion"] != "2010-09-09" {
		p.addf("AWSTemplateFormatVersion is %v, want 2010-09-09", tpl["AWSTemplateFormatVersion"])
	}
	desc, _ := tpl["Description"].(string)
	if len(desc) > 1024 {
		p.addf("Description is %d bytes; CloudFormation allows 1024", len(desc))
	}
	for _, s := range []string{"TransactWriteItems", "dynamodb:PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"} {
		if !strings.Contains(desc, s) {
			p.addf("Description does not say that transactions are authorized by the per-item actions (no %q)", s)
		}
	}
	return p
}

// Table.

func checkTableMatchesDefinition(tpl map[string]any) []string {
	var p problems
	want := store.TableDefinition("x")
	table, ok := lookup(tpl, "Resources", "Table").(map[string]any)
	if !ok {
		return []string{"no resource Table"}
	}
	if table["Type"] != "AWS::DynamoDB::Table" {
		p.addf("Table is a %v, want AWS::DynamoDB::Table", table["Type"])
	}
	props, _ := table["Properties"].(map[string]any)
	p.onlyKeys("Table.Properties", props, "AttributeDefinitions", "BillingMode", "ContributorInsightsSpecification",
		"DeletionProtectionEnabled", "GlobalSecondaryIndexes", "ImportSourceSpecification", "KeySchema",
		"KinesisStreamSpecification", "LocalSecondaryIndexes", "OnDemandThroughput", "PointInTimeRecoverySpecification",
		"ProvisionedThroughput", "ResourcePolicy", "SSESpecification", "StreamSpecification", "TableClass", "TableName",
		"Tags", "TimeToLiveSpecification", "WarmThroughput")

	if canonical(props["TableName"]) != "${TableName}" {
		p.addf("TableName is %v, want the TableName parameter", props["TableName"])
	}
	if got := types.BillingMode(str(props["BillingMode"])); got != want.BillingMode {
		p.addf("BillingMode is %q, want %q", got, want.BillingMode)
	}
	if _, ok := props["ProvisionedThroughput"]; ok && want.BillingMode == types.BillingModePayPerRequest {
		p.addf("ProvisionedThroughput is set on an on-demand table")
	}
	if g, w := keySchemaString(p.keySchema("Table.KeySchema", props["KeySchema"])), keySchemaString(want.KeySchema); g != w {
		p.addf("KeySchema is %s, want %s", g, w)
	}
	if g, w := attributesString(p.attributes(props["AttributeDefinitions"])), attributesString(want.AttributeDefinitions); g != w {
		p.addf("AttributeDefinitions are %s, want %s", g, w)
	}
	if _, ok := props["LocalSecondaryIndexes"]; ok && len(want.LocalSecondaryIndexes) == 0 {
		p.addf("LocalSecondaryIndexes are set; store.TableDefinition has none")
	}

	got := map[string]types.GlobalSecondaryIndex{}
	for i, g := range list(props["GlobalSecondaryIndexes"]) {
		gsi := p.globalIndex(fmt.Sprintf("GlobalSecondaryIndexes[%d]", i), g)
		got[aws.ToString(gsi.IndexName)] = gsi
	}
	for _, w := range want.GlobalSecondaryIndexes {
		name := aws.ToString(w.IndexName)
		g, ok := got[name]
		if !ok {
			p.addf("index %s is missing", name)
			continue
		}
		delete(got, name)
		if gk, wk := keySchemaString(g.KeySchema), keySchemaString(w.KeySchema); gk != wk {
			p.addf("index %s: KeySchema is %s, want %s", name, gk, wk)
		}
		if gp, wp := projectionString(g.Projection), projectionString(w.Projection); gp != wp {
			p.addf("index %s: Projection is %s, want %s", name, gp, wp)
		}
	}
	for name := range got {
		p.addf("index %s is not in store.TableDefinition", name)
	}
	return p
}

func (p *problems) keySchema(where string, v any) []types.KeySchemaElement {
	var ks []types.KeySchemaElement
	for i, e := range list(v) {
		m, _ := e.(map[string]any)
		p.onlyKeys(fmt.Sprintf("%s[%d]", where, i), m, "AttributeName", "KeyType")
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(str(m["AttributeName"])), KeyType: types.KeyType(str(m["KeyType"]))})
	}
	return ks
}

func (p *problems) attributes(v any) []types.AttributeDefinition {
	var as []types.AttributeDefinition
	for i, e := range list(v) {
		m, _ := e.(map[string]any)
		p.onlyKeys(fmt.Sprintf("AttributeDefinitions[%d]", i), m, "AttributeName", "AttributeType")
		as = append(as, types.AttributeDefinition{AttributeName: aws.String(str(m["AttributeName"])), AttributeType: types.ScalarAttributeType(str(m["AttributeType"]))})
	}
	return as
}

func (p *problems) globalIndex(where string, v any) types.GlobalSecondaryIndex {
	m, _ := v.(map[string]any)
	p.onlyKeys(where, m, "IndexName", "KeySchema", "Projection", "ContributorInsightsSpecification", "OnDemandThroughput", "ProvisionedThroughput", "WarmThroughput")
	proj, _ := m["Projection"].(map[string]any)
	p.onlyKeys(where+".Projection", proj, "ProjectionType", "NonKeyAttributes")
	var nonKey []string
	for _, a := range list(proj["NonKeyAttributes"]) {
		nonKey = append(nonKey, str(a))
	}
	return types.GlobalSecondaryIndex{
		IndexName:  aws.String(str(m["IndexName"])),
		KeySchema:  p.keySchema(where+".KeySchema", m["KeySchema"]),
		Projection: &types.Projection{ProjectionType: types.ProjectionType(str(proj["ProjectionType"])), NonKeyAttributes: nonKey},
	}
}

// keySchemaString keeps the order: the hash key must come first.
func keySchemaString(ks []types.KeySchemaElement) string {
	var s []string
	for _, k := range ks {
		s = append(s, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// attributesString ignores the order: the definitions are a set.
func attributesString(as []types.AttributeDefinition) string {
	var s []string
	for _, a := range as {
		s = append(s, aws.ToString(a.AttributeName)+" "+string(a.AttributeType))
	}
	sort.Strings(s)
	return "{" + strings.Join(s, ", ") + "}"
}

func projectionString(p *types.Projection) string {
	if p == nil {
		return "none"
	}
	attrs := slices.Clone(p.NonKeyAttributes)
	sort.Strings(attrs)
	return string(p.ProjectionType) + " " + strings.Join(attrs, ",")
}

func checkTableProtection(tpl map[string]any) []string {
	var p problems
	table, _ := lookup(tpl, "Resources", "Table").(map[string]any)
	props, _ := table["Properties"].(map[string]any)
	for _, policy := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
		if table[policy] != "Retain" {
			p.addf("Table.%s is %v, want Retain", policy, table[policy])
		}
	}
	if lookup(props, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled") != true {
		p.addf("point-in-time recovery is not enabled")
	}
	if props["DeletionProtectionEnabled"] != true {
		p.addf("deletion protection is not enabled")
	}
	if lookup(props, "SSESpecification", "SSEEnabled") != true || lookup(props, "SSESpecification", "SSEType") != "KMS" {
		p.addf("server-side encryption with KMS is not enabled: %v", props["SSESpecification"])
	}
	// The service stores idempotency records with an expiry in ExpiresAt.
	if lookup(props, "TimeToLiveSpecification", "AttributeName") != "ExpiresAt" || lookup(props, "TimeToLiveSpecification", "Enabled") != true {
		p.addf("TTL is not enabled on ExpiresAt: %v", props["TimeToLiveSpecification"])
	}
	return p
}

// Policies.

type statement struct {
	sid, effect  string
	actions      []string
	notAction    bool
	resources    []string
	notResource  bool
	hasCondition bool
	condition    map[string]any
}

func (p *problems) statements(tpl map[string]any, policy string) []statement {
	res, _ := lookup(tpl, "Resources", policy).(map[string]any)
	if res == nil {
		p.addf("no resource %s", policy)
		return nil
	}
	if res["Type"] != "AWS::IAM::ManagedPolicy" {
		p.addf("%s is a %v, want AWS::IAM::ManagedPolicy", policy, res["Type"])
	}
	doc, _ := lookup(res, "Properties", "PolicyDocument").(map[string]any)
	if doc["Version"] != "2012-10-17" {
		p.addf("%s: policy Version is %v, want 2012-10-17", policy, doc["Version"])
	}
	var sts []statement
	for i, v := range list(doc["Statement"]) {
		m, _ := v.(map[string]any)
		where := fmt.Sprintf("%s statement %d", policy, i)
		p.onlyKeys(where, m, "Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition")
		st := statement{sid: str(m["Sid"]), effect: str(m["Effect"])}
		if st.effect != "Allow" && st.effect != "Deny" {
			p.addf("%s: Effect is %q", where, st.effect)
		}
		actions, notAction := m["Action"], false
		if na, ok := m["NotAction"]; ok {
			actions, notAction = na, true
		}
		for _, a := range list(actions) {
			st.actions = append(st.actions, str(a))
		}
		st.notAction = notAction
		resources := m["Resource"]
		if nr, ok := m["NotResource"]; ok {
			resources, st.notResource = nr, true
		}
		for _, r := range list(resources) {
			st.resources = append(st.resources, canonical(r))
		}
		st.condition, st.hasCondition = m["Condition"].(map[string]any)
		sts = append(sts, st)
	}
	return sts
}

// actionMatches reports whether an IAM action pattern (case-insensitive, with
// the wildcards * and ?) covers action.
func actionMatches(pattern, action string) bool {
	re := regexp.QuoteMeta(pattern)
	re = strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(re)
	return regexp.MustCompile(`(?i)^` + re + `$`).MatchString(action)
}

func resourceCovers(pattern, arn string) bool {
	return pattern == "*" || pattern == arn || strings.HasSuffix(pattern, "*") && strings.HasPrefix(arn, strings.TrimSuffix(pattern, "*"))
}

// scanActions are the actions that can read a whole table: Scan, and a
// PartiQL SELECT without a partition key condition.
var scanActions = []string{"dynamodb:Scan", "dynamodb:PartiQLSelect"}

func checkServiceNeverScans(tpl map[string]any) []string {
	var p problems
	denied := map[string]bool{}
	for _, st := range p.statements(tpl, "ServicePolicy") {
		for _, scan := range scanActions {
			covered := slices.ContainsFunc(st.actions, func(a string) bool { return actionMatches(a, scan) })
			switch {
			case st.effect == "Allow" && st.notAction:
				p.addf("statement %q allows NotAction %v, which includes %s", st.sid, st.actions, scan)
			case st.effect == "Allow" && covered:
				p.addf("statement %q allows %v, which includes %s", st.sid, st.actions, scan)
			case st.effect == "Deny" && covered && !st.notAction && !st.notResource && !st.hasCondition:
				for _, arn := range []string{tableARN, indexesARN} {
					if slices.ContainsFunc(st.resources, func(r string) bool { return resourceCovers(r, arn) }) {
						denied[scan+" on "+arn] = true
					}
				}
			}
		}
	}
	for _, scan := range scanActions {
		for _, arn := range []string{tableARN, indexesARN} {
			if !denied[scan+" on "+arn] {
				p.addf("no unconditional Deny of %s on %s", scan, arn)
			}
		}
	}
	return p
}

// grants maps each allowed action (lower case) to the resources it is
// allowed on, and reports what cannot be expressed that way.
func (p *problems) grants(sts []statement) map[string][]string {
	g := map[string][]string{}
	for _, st := range sts {
		if st.effect != "Allow" {
			continue
		}
		if st.notAction || st.notResource {
			p.addf("statement %q uses NotAction or NotResource in an Allow", st.sid)
		}
		for _, a := range st.actions {
			if strings.ContainsAny(a, "*?") {
				p.addf("statement %q allows the wildcard action %q", st.sid, a)
			}
			a = strings.ToLower(a)
			for _, r := range st.resources {
				if !slices.Contains(g[a], r) {
					g[a] = append(g[a], r)
				}
			}
		}
	}
	for a := range g {
		sort.Strings(g[a])
	}
	return g
}

func (p *problems) grantsEqual(policy string, got, want map[string][]string) {
	for a, rs := range want {
		if !slices.Equal(got[a], rs) {
			p.addf("%s allows %s on %v, want exactly %v", policy, a, got[a], rs)
		}
	}
	for a, rs := range got {
		if _, ok := want[a]; !ok {
			p.addf("%s allows %s on %v, which it does not need", policy, a, rs)
		}
	}
}

func checkServiceLeastPrivilege(tpl map[string]any) []string {
	var p problems
	want := map[string][]string{"dynamodb:query": {tableARN, indexesARN}}
	// The per-item actions authorize TransactWriteItems too: there is no
	// separate IAM action for a transaction.
	for _, a := range []string{"GetItem", "BatchGetItem", "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "ConditionCheckItem", "DescribeTable"} {
		want["dynamodb:"+strings.ToLower(a)] = []string{tableARN}
	}
	p.grantsEqual("the service policy", p.grants(p.statements(tpl, "ServicePolicy")), want)
	return p
}

func checkExporterConfined(tpl map[string]any) []string {
	var p problems
	sts := p.statements(tpl, "ExporterPolicy")
	objects := exportObject + "*"
	want := map[string][]string{
		"dynamodb:scan":          {tableARN},
		"dynamodb:describetable": {tableARN},
		"dynamodb:getitem":       {tableARN},
		"dynamodb:query":         {tableARN, tableARN + "/index/GSI1"}, // GSI1: the change index of export --since-last
		"dynamodb:putitem":       {tableARN},
		"dynamodb:updateitem":    {tableARN},
		"dynamodb:deleteitem":    {tableARN},
		"s3:listbucket":          {bucketARN},
	}
	for _, a := range []string{"PutObject", "GetObject", "DeleteObject", "AbortMultipartUpload", "ListMultipartUploadParts"} {
		want["s3:"+strings.ToLower(a)] = []string{objects}
	}
	p.grantsEqual("the exporter policy", p.grants(sts), want)

	// Whatever the grants, no S3 resource may reach outside the prefix, and
	// the bucket itself may only be listed under it; the exporter writes
	// items only under EXPORT# keys (its per-date lease).
	for _, st := range sts {
		if st.effect != "Allow" {
			continue
		}
		for _, a := range st.actions {
			switch strings.ToLower(a) {
			case "dynamodb:putitem", "dynamodb:updateitem", "dynamodb:deleteitem", "dynamodb:batchwriteitem", "dynamodb:*", "*":
				c, _ := st.condition["ForAllValues:StringLike"].(map[string]any)
				keys, _ := c["dynamodb:LeadingKeys"].([]any)
				if len(st.condition) != 1 || len(c) != 1 || len(keys) != 1 || keys[0] != "EXPORT#*" {
					p.addf("statement %q allows %s on items other than the export lease (want the condition ForAllValues:StringLike dynamodb:LeadingKeys [EXPORT#*])", st.sid, a)
				}
			}
		}
		for _, r := range st.resources {
			switch {
			case strings.HasPrefix(r, exportObject):
			case r == bucketARN:
				for _, a := range st.actions {
					if !strings.EqualFold(a, "s3:ListBucket") {
						p.addf("statement %q allows %s on the whole bucket", st.sid, a)
					}
				}
				p.listConfined(st)
			case strings.Contains(r, ":s3:") || r == "*":
				p.addf("statement %q allows %v on %s, outside s3://${ExportBucketName}/${ExportPrefix}", st.sid, st.actions, r)
			}
		}
	}
	return p
}

// listConfined reports a ListBucket statement that lets the exporter list
// keys outside the export prefix.
func (p *problems) listConfined(st statement) {
	var prefixes []string
	for op, kv := range st.condition {
		m, _ := kv.(map[string]any)
		for key, v := range m {
			if key != "s3:prefix" {
				continue
			}
			if op != "StringLike" && op != "StringEquals" {
				p.addf("statement %q restricts s3:prefix with %s, want StringLike", st.sid, op)
			}
			for _, pre := range list(v) {
				prefixes = append(prefixes, canonical(pre))
			}
		}
	}
	if len(prefixes) == 0 {
		p.addf("statement %q lists the bucket without restricting s3:prefix", st.sid)
	}
	for _, pre := range prefixes {
		if !strings.HasPrefix(pre, "${ExportPrefix}") {
			p.addf("statement %q lets s3:prefix be %q, outside ${ExportPrefix}", st.sid, pre)
		}
	}
}

// checkExportPrefixParameter runs the prefix's AllowedPattern (plain enough
// to mean the same in Go and in CloudFormation's Java) on good and bad values:
// an empty prefix would grant the whole bucket, a wildcard more than the prefix.
func checkExportPrefixParameter(tpl map[string]any) []string {
	var p problems
	param, _ := lookup(tpl, "Parameters", "ExportPrefix").(map[string]any)
	if param["Default"] != "fundsvc/" {
		p.addf("ExportPrefix defaults to %v, want fundsvc/", param["Default"])
	}
	re, err := regexp.Compile(str(param["AllowedPattern"]))
	if err != nil || param["AllowedPattern"] == nil {
		return append(p, fmt.Sprintf("ExportPrefix has no usable AllowedPattern: %v", err))
	}
	for _, ok := range []string{"fundsvc/", "exports/fundsvc/", "data-lake/fund_svc.v1/"} {
		if !re.MatchString(ok) {
			p.addf("ExportPrefix rejects %q", ok)
		}
	}
	for _, bad := range []string{"", "/", "fundsvc", "/fundsvc/", "*", "*/", "fund*/", "fund?/", "${aws:username}/", "a/*/"} {
		if re.MatchString(bad) {
			p.addf("ExportPrefix accepts %q", bad)
		}
	}
	if tn, _ := lookup(tpl, "Parameters", "TableName").(map[string]any); tn["Default"] != "fundsvc" {
		p.addf("TableName defaults to %v, want fundsvc", tn["Default"])
	}
	if _, ok := lookup(tpl, "Parameters", "ExportBucketName").(map[string]any); !ok {
		p.addf("no ExportBucketName parameter")
	}
	return p
}

// References.

var pseudoParameters = []string{"AWS::AccountId", "AWS::NotificationARNs", "AWS::NoValue", "AWS::Partition", "AWS::Region", "AWS::StackId", "AWS::StackName", "AWS::URLSuffix"}

// attributes lists the Fn::GetAtt attributes of the resource types used.
var attributes = map[string][]string{
	"AWS::DynamoDB::Table":    {"Arn", "StreamArn", "TableId"},
	"AWS::IAM::ManagedPolicy": {"PolicyArn", "PolicyId", "DefaultVersionId", "AttachmentCount", "CreateDate", "UpdateDate", "IsAttachable", "PermissionsBoundaryUsageCount"},
}

var intrinsics = []string{"Fn::Base64", "Fn::Cidr", "Fn::FindInMap", "Fn::GetAtt", "Fn::GetAZs", "Fn::ImportValue", "Fn::Join", "Fn::Length", "Fn::Select", "Fn::Split", "Fn::Sub", "Fn::ToJsonString", "Fn::If", "Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or"}

var subVariable = regexp.MustCompile(`\$\{([^}]*)\}`)

func checkReferences(tpl map[string]any) []string {
	var p problems
	params, _ := tpl["Parameters"].(map[string]any)
	resources, _ := tpl["Resources"].(map[string]any)
	ref := func(where, name string, local map[string]any) {
		if _, ok := local[name]; ok {
			return
		}
		if _, ok := params[name]; ok || slices.Contains(pseudoParameters, name) {
			return
		}
		if _, ok := resources[name]; !ok {
			p.addf("%s: %q is no parameter or resource", where, name)
		}
	}
	getAtt := func(where, res, attr string) {
		r, ok := resources[res].(map[string]any)
		if !ok {
			p.addf("%s: %q is no resource", where, res)
			return
		}
		if !slices.Contains(attributes[str(r["Type"])], attr) {
			p.addf("%s: %s (%v) has no attribute %q", where, res, r["Type"], attr)
		}
	}
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", where, i), e)
			}
		case map[string]any:
			for k, e := range v {
				switch {
				case k == "Ref":
					ref(where, str(e), nil)
				case k == "Fn::GetAtt":
					parts := list(e)
					if s, ok := e.(string); ok {
						parts = nil
						for _, part := range strings.SplitN(s, ".", 2) {
							parts = append(parts, part)
						}
					}
					if len(parts) != 2 {
						p.addf("%s: Fn::GetAtt %v is not [resource, attribute]", where, e)
						continue
					}
					getAtt(where, str(parts[0]), str(parts[1]))
				case k == "Fn::Sub":
					s, local := e, map[string]any(nil)
					if l, ok := e.([]any); ok && len(l) == 2 {
						s = l[0]
						local, _ = l[1].(map[string]any)
						walk(where+".Fn::Sub", l[1])
					}
					text, ok := s.(string)
					if !ok {
						p.addf("%s: Fn::Sub of %v", where, e)
						continue
					}
					for _, m := range subVariable.FindAllStringSubmatch(text, -1) {
						name := m[1]
						if strings.HasPrefix(name, "!") {
							continue // ${!Literal}
						}
						if res, attr, ok := strings.Cut(name, "."); ok {
							getAtt(where, res, attr)
						} else {
							ref(where, name, local)
						}
					}
				case strings.HasPrefix(k, "Fn:") && !slices.Contains(intrinsics, k):
					p.addf("%s: unknown intrinsic function %q", where, k)
				default:
					if strings.HasPrefix(k, "Fn") && !strings.HasPrefix(k, "Fn::") {
						p.addf("%s: %q looks like a misspelled intrinsic function", where, k)
					}
					walk(where+"."+k, e)
				}
			}
		}
	}
	walk("Resources", resources)
	walk("Outputs", tpl["Outputs"])
	return p
}

func checkOutputs(tpl map[string]any) []string {
	var p problems
	want := map[string]string{
		"TableName":         "${Table}",
		"TableArn":          tableARN,
		"ServicePolicyArn":  "${ServicePolicy}",
		"ExporterPolicyArn": "${ExporterPolicy}",
	}
	for name, value := range want {
		if got := canonical(lookup(tpl, "Outputs", name, "Value")); got != value {
			p.addf("output %s is %q, want %q", name, got, value)
		}
	}
	return p
}

// Helpers.

// canonical spells a string, Ref, GetAtt or Sub as the string a Sub would
// use, so that {"Fn::GetAtt": ["Table", "Arn"]} and "${Table.Arn}" compare equal.
func canonical(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if len(v) != 1 {
			break
		}
		if r, ok := v["Ref"].(string); ok {
			return "${" + r + "}"
		}
		if s, ok := v["Fn::Sub"].(string); ok {
			return s
		}
		if s, ok := v["Fn::GetAtt"].(string); ok {
			return "${" + s + "}"
		}
		if l, ok := v["Fn::GetAtt"].([]any); ok && len(l) == 2 {
			return "${" + str(l[0]) + "." + str(l[1]) + "}"
		}
	}
	b, _ := json.Marshal(v)
	return "<unsupported " + string(b) + ">"
}

// lookup follows keys through nested objects; it returns nil if one is missing.
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// list treats a single value as a list of one, as IAM and CloudFormation do.
func list(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	default:
		return []any{v}
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Mutation helpers: they panic on a template of an unexpected shape, which
// fails the test that uses them.

func obj(v any, keys ...string) map[string]any { return lookup(v, keys...).(map[string]any) }

func tableProps(tpl map[string]any) map[string]any {
	return obj(tpl, "Resources", "Table", "Properties")
}

func gsis(tpl map[string]any) []any { return list(tableProps(tpl)["GlobalSecondaryIndexes"]) }

func policyStatements(tpl map[string]any, policy string) []any {
	return list(lookup(tpl, "Resources", policy, "Properties", "PolicyDocument", "Statement"))
}

func addAction(st any, action string) {
	m := obj(st)
	m["Action"] = append(list(m["Action"]), action)
}
