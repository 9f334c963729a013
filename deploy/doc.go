// Package deploy holds fundsvc's AWS CloudFormation template,
// fundsvc.cfn.json: the table that store.TableDefinition describes, and the
// IAM policies of the service and of the exporter. It has no code; its test
// keeps the template and store.TableDefinition equal and the policies tight.
package deploy
