-- fundsvc export schema version 5: the published snapshots, one per date
CREATE EXTERNAL TABLE IF NOT EXISTS snapshots (
  `run_id` string,
  `slot` string,
  `kind` string,
  `schema_version` int
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'
WITH SERDEPROPERTIES (
  'case.insensitive' = 'false',
  'mapping.run_id' = 'runId',
  'mapping.schema_version' = 'schemaVersion'
)
LOCATION 's3://lake/fundsvc/_manifests/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_manifests/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '5'
);

-- fundsvc export schema version 5: dataset documents
CREATE EXTERNAL TABLE IF NOT EXISTS documents_slots (
  `fund_id` string,
  `document_id` string,
  `kind` string,
  `title` string,
  `as_of` date,
  `currency` string,
  `position_count` int,
  `version` int,
  `created_at` timestamp,
  `created_by` string
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/documents/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/documents/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW documents AS
SELECT t."fund_id", t."document_id", t."kind", t."title", t."as_of", t."currency", t."position_count", t."version", t."created_at", t."created_by", t."snapshot_date"
FROM documents_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset document_versions
CREATE EXTERNAL TABLE IF NOT EXISTS document_versions_slots (
  `fund_id` string,
  `document_id` string,
  `kind` string,
  `title` string,
  `as_of` date,
  `currency` string,
  `position_count` int,
  `version` int,
  `created_at` timestamp,
  `created_by` string,
  `status` string,
  `committed_at` timestamp,
  `superseded_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/document_versions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/document_versions/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW document_versions AS
SELECT t."fund_id", t."document_id", t."kind", t."title", t."as_of", t."currency", t."position_count", t."version", t."created_at", t."created_by", t."status", t."committed_at", t."superseded_at", t."snapshot_date"
FROM document_versions_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset capital_activities
CREATE EXTERNAL TABLE IF NOT EXISTS capital_activities_slots (
  `fund_id` string,
  `document_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `activity_date` date,
  `description` string,
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/capital_activities/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/capital_activities/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW capital_activities AS
SELECT t."fund_id", t."document_id", t."document_version", t."as_of", t."currency", t."amount", t."status", t."activity_date", t."description", t."created_at", t."snapshot_date"
FROM capital_activities_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset capital_accounts
CREATE EXTERNAL TABLE IF NOT EXISTS capital_accounts_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `period_start` date,
  `beginning_nav` decimal(19,4),
  `contributions` decimal(19,4),
  `distributions` decimal(19,4),
  `offering_syndication_costs` decimal(19,4),
  `placement_fees` decimal(19,4),
  `partner_transfers` decimal(19,4),
  `management_fees_gross` decimal(19,4),
  `management_fee_rebate` decimal(19,4),
  `fee_waivers` decimal(19,4),
  `management_fee_offsets` decimal(19,4),
  `adviser_related_persons_expenses` decimal(19,4),
  `partnership_expenses` decimal(19,4),
  `investment_income` decimal(19,4),
  `net_realized_gain_loss` decimal(19,4),
  `net_unrealized_gain_loss` decimal(19,4),
  `ending_nav` decimal(19,4),
  `carried_interest_accrued_earned` decimal(19,4),
  `carried_interest_paid` decimal(19,4),
  `total_commitment` decimal(19,4),
  `beginning_unfunded_commitment` decimal(19,4),
  `less_contributions` decimal(19,4),
  `plus_recallable_distributions` decimal(19,4),
  `less_expired_released_commitments` decimal(19,4),
  `other_unfunded_adjustment` decimal(19,4),
  `ending_unfunded_commitment` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/capital_accounts/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/capital_accounts/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW capital_accounts AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."period_start", t."beginning_nav", t."contributions", t."distributions", t."offering_syndication_costs", t."placement_fees", t."partner_transfers", t."management_fees_gross", t."management_fee_rebate", t."fee_waivers", t."management_fee_offsets", t."adviser_related_persons_expenses", t."partnership_expenses", t."investment_income", t."net_realized_gain_loss", t."net_unrealized_gain_loss", t."ending_nav", t."carried_interest_accrued_earned", t."carried_interest_paid", t."total_commitment", t."beginning_unfunded_commitment", t."less_contributions", t."plus_recallable_distributions", t."less_expired_released_commitments", t."other_unfunded_adjustment", t."ending_unfunded_commitment", t."created_at", t."snapshot_date"
FROM capital_accounts_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset capital_account_versions
CREATE EXTERNAL TABLE IF NOT EXISTS capital_account_versions_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `period_start` date,
  `beginning_nav` decimal(19,4),
  `contributions` decimal(19,4),
  `distributions` decimal(19,4),
  `offering_syndication_costs` decimal(19,4),
  `placement_fees` decimal(19,4),
  `partner_transfers` decimal(19,4),
  `management_fees_gross` decimal(19,4),
  `management_fee_rebate` decimal(19,4),
  `fee_waivers` decimal(19,4),
  `management_fee_offsets` decimal(19,4),
  `adviser_related_persons_expenses` decimal(19,4),
  `partnership_expenses` decimal(19,4),
  `investment_income` decimal(19,4),
  `net_realized_gain_loss` decimal(19,4),
  `net_unrealized_gain_loss` decimal(19,4),
  `ending_nav` decimal(19,4),
  `carried_interest_accrued_earned` decimal(19,4),
  `carried_interest_paid` decimal(19,4),
  `total_commitment` decimal(19,4),
  `beginning_unfunded_commitment` decimal(19,4),
  `less_contributions` decimal(19,4),
  `plus_recallable_distributions` decimal(19,4),
  `less_expired_released_commitments` decimal(19,4),
  `other_unfunded_adjustment` decimal(19,4),
  `ending_unfunded_commitment` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/capital_account_versions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/capital_account_versions/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW capital_account_versions AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."period_start", t."beginning_nav", t."contributions", t."distributions", t."offering_syndication_costs", t."placement_fees", t."partner_transfers", t."management_fees_gross", t."management_fee_rebate", t."fee_waivers", t."management_fee_offsets", t."adviser_related_persons_expenses", t."partnership_expenses", t."investment_income", t."net_realized_gain_loss", t."net_unrealized_gain_loss", t."ending_nav", t."carried_interest_accrued_earned", t."carried_interest_paid", t."total_commitment", t."beginning_unfunded_commitment", t."less_contributions", t."plus_recallable_distributions", t."less_expired_released_commitments", t."other_unfunded_adjustment", t."ending_unfunded_commitment", t."created_at", t."snapshot_date"
FROM capital_account_versions_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset capital_calls
CREATE EXTERNAL TABLE IF NOT EXISTS capital_calls_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `due_date` date,
  `investment` decimal(19,4),
  `management_fee` decimal(19,4),
  `fund_expenses` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/capital_calls/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/capital_calls/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW capital_calls AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."amount", t."status", t."due_date", t."investment", t."management_fee", t."fund_expenses", t."created_at", t."snapshot_date"
FROM capital_calls_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset capital_call_versions
CREATE EXTERNAL TABLE IF NOT EXISTS capital_call_versions_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `due_date` date,
  `investment` decimal(19,4),
  `management_fee` decimal(19,4),
  `fund_expenses` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/capital_call_versions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/capital_call_versions/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW capital_call_versions AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."amount", t."status", t."due_date", t."investment", t."management_fee", t."fund_expenses", t."created_at", t."snapshot_date"
FROM capital_call_versions_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset distributions
CREATE EXTERNAL TABLE IF NOT EXISTS distributions_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `payment_date` date,
  `return_of_capital` decimal(19,4),
  `realized_gain` decimal(19,4),
  `income` decimal(19,4),
  `recallable` decimal(19,4),
  `withholding` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/distributions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/distributions/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW distributions AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."amount", t."status", t."payment_date", t."return_of_capital", t."realized_gain", t."income", t."recallable", t."withholding", t."created_at", t."snapshot_date"
FROM distributions_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset distribution_versions
CREATE EXTERNAL TABLE IF NOT EXISTS distribution_versions_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `payment_date` date,
  `return_of_capital` decimal(19,4),
  `realized_gain` decimal(19,4),
  `income` decimal(19,4),
  `recallable` decimal(19,4),
  `withholding` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/distribution_versions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/distribution_versions/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW distribution_versions AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."amount", t."status", t."payment_date", t."return_of_capital", t."realized_gain", t."income", t."recallable", t."withholding", t."created_at", t."snapshot_date"
FROM distribution_versions_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset transaction_lines
CREATE EXTERNAL TABLE IF NOT EXISTS transaction_lines_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `item_type` string,
  `status` string,
  `line` int,
  `transaction_type` string,
  `ilpa_label` string,
  `net_treatment` string,
  `unfunded_effect` string,
  `amount` decimal(19,4),
  `effective_date` date,
  `stated` boolean,
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/transaction_lines/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/transaction_lines/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW transaction_lines AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."item_type", t."status", t."line", t."transaction_type", t."ilpa_label", t."net_treatment", t."unfunded_effect", t."amount", t."effective_date", t."stated", t."created_at", t."snapshot_date"
FROM transaction_lines_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset transaction_line_versions
CREATE EXTERNAL TABLE IF NOT EXISTS transaction_line_versions_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `item_type` string,
  `status` string,
  `line` int,
  `transaction_type` string,
  `ilpa_label` string,
  `net_treatment` string,
  `unfunded_effect` string,
  `amount` decimal(19,4),
  `effective_date` date,
  `stated` boolean,
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/transaction_line_versions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/transaction_line_versions/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW transaction_line_versions AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."item_type", t."status", t."line", t."transaction_type", t."ilpa_label", t."net_treatment", t."unfunded_effect", t."amount", t."effective_date", t."stated", t."created_at", t."snapshot_date"
FROM transaction_line_versions_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset unfunded_commitments
CREATE EXTERNAL TABLE IF NOT EXISTS unfunded_commitments_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `commitment` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/unfunded_commitments/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/unfunded_commitments/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW unfunded_commitments AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."amount", t."status", t."commitment", t."created_at", t."snapshot_date"
FROM unfunded_commitments_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset unfunded_commitment_versions
CREATE EXTERNAL TABLE IF NOT EXISTS unfunded_commitment_versions_slots (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `commitment` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/unfunded_commitment_versions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/unfunded_commitment_versions/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW unfunded_commitment_versions AS
SELECT t."fund_id", t."document_id", t."investor_id", t."position_id", t."document_version", t."as_of", t."currency", t."amount", t."status", t."commitment", t."created_at", t."snapshot_date"
FROM unfunded_commitment_versions_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset funds
CREATE EXTERNAL TABLE IF NOT EXISTS funds_slots (
  `fund_id` string,
  `name` string,
  `legal_name` string,
  `base_currency` string,
  `vintage_year` int,
  `target_size` decimal(19,4),
  `inception_date` date,
  `external_ids` string,
  `version` int,
  `updated_at` timestamp,
  `updated_by` string
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/funds/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/funds/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW funds AS
SELECT t."fund_id", t."name", t."legal_name", t."base_currency", t."vintage_year", t."target_size", t."inception_date", t."external_ids", t."version", t."updated_at", t."updated_by", t."snapshot_date"
FROM funds_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset investors
CREATE EXTERNAL TABLE IF NOT EXISTS investors_slots (
  `investor_id` string,
  `display_name` string,
  `investor_type` string,
  `external_ids` string,
  `version` int,
  `updated_at` timestamp,
  `updated_by` string
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/investors/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/investors/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW investors AS
SELECT t."investor_id", t."display_name", t."investor_type", t."external_ids", t."version", t."updated_at", t."updated_by", t."snapshot_date"
FROM investors_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";

-- fundsvc export schema version 5: dataset positions
CREATE EXTERNAL TABLE IF NOT EXISTS positions_slots (
  `fund_id` string,
  `position_id` string,
  `investor_id` string,
  `currency` string,
  `registered_at` timestamp,
  `document_count` int,
  `first_as_of` date,
  `last_as_of` date
)
PARTITIONED BY (`snapshot_date` string, `slot` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/positions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'projection.slot.type' = 'enum',
  'projection.slot.values' = 'a,b',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/positions/snapshot_date=${snapshot_date}/slot=${slot}/',
  'fundsvc.schema_version' = '5'
);

CREATE OR REPLACE VIEW positions AS
SELECT t."fund_id", t."position_id", t."investor_id", t."currency", t."registered_at", t."document_count", t."first_as_of", t."last_as_of", t."snapshot_date"
FROM positions_slots t
JOIN snapshots s ON s."snapshot_date" = t."snapshot_date" AND s."slot" = t."slot";
