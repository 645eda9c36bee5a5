{{/* Chart name, truncated to the DNS label limit. */}}
{{- define "syncular-server.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name. */}}
{{- define "syncular-server.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "syncular-server.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The serving pods (the Service, PDB, spread and NetworkPolicy select these; the backfill Job's pods differ). */}}
{{- define "syncular-server.selectorLabels" -}}
app.kubernetes.io/name: {{ include "syncular-server.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end }}

{{- define "syncular-server.commonLabels" -}}
helm.sh/chart: {{ include "syncular-server.chart" . }}
app.kubernetes.io/name: {{ include "syncular-server.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "syncular-server.labels" -}}
{{ include "syncular-server.commonLabels" . }}
app.kubernetes.io/component: server
{{- end }}

{{- define "syncular-server.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "syncular-server.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "syncular-server.backfillJobName" -}}
{{- printf "%s-backfill-%s" (include "syncular-server.fullname" .) (.Values.backfill.checkpoint | lower | replace "_" "-") | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "syncular-server.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The mounted paths of the older schema IR documents (syncular.schema.window), comma-separated; empty for none. */}}
{{- define "syncular-server.schemaWindow" -}}
{{- $paths := list }}
{{- if .Values.schema.existingConfigMap }}
{{- range .Values.schema.windowKeys }}
{{- $paths = append $paths (printf "/etc/syncular/schema/%s" .) }}
{{- end }}
{{- else if .Values.schema.ir }}
{{- range $name, $ir := .Values.schema.window }}
{{- $paths = append $paths (printf "/etc/syncular/schema/window-%s.json" $name) }}
{{- end }}
{{- end }}
{{- join "," $paths }}
{{- end }}

{{/* Where the schema IR comes from: the chart's ConfigMap, an existing one, or none (the bundled schema). */}}
{{- define "syncular-server.schemaConfigMap" -}}
{{- if .Values.schema.existingConfigMap }}
{{- .Values.schema.existingConfigMap }}
{{- else if .Values.schema.ir }}
{{- include "syncular-server.fullname" . }}-schema
{{- end }}
{{- end }}

{{/* A secretKeyRef env entry: name, secret, key. */}}
{{- define "syncular-server.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret | quote }}
      key: {{ .key | quote }}
{{- end }}

{{/*
The container environment shared by the server and the backfill Job: the configuration file, and every
secret by reference (never a value).
*/}}
{{- define "syncular-server.env" -}}
- name: QUARKUS_CONFIG_LOCATIONS
  value: /etc/syncular/config/application.properties
- name: JAVA_TOOL_OPTIONS
  value: {{ .Values.javaOpts | quote }}
- name: QUARKUS_MANAGEMENT_PORT
  value: {{ .Values.service.managementPort | quote }}
{{- with .Values.postgresql }}
{{- if .existingSecret }}
{{ include "syncular-server.secretEnv" (dict "name" "SYNCULAR_PG_USER" "secret" .existingSecret "key" .usernameKey) }}
{{ include "syncular-server.secretEnv" (dict "name" "SYNCULAR_PG_PASSWORD" "secret" .existingSecret "key" .passwordKey) }}
{{- if .urlKey }}
{{ include "syncular-server.secretEnv" (dict "name" "SYNCULAR_PG_URL" "secret" .existingSecret "key" .urlKey) }}
{{- end }}
{{- end }}
{{- end }}
{{- with .Values.s3.credentials }}
{{- if and (eq .source "secret") .existingSecret }}
{{ include "syncular-server.secretEnv" (dict "name" "SYNCULAR_S3_ACCESS_KEY_ID" "secret" .existingSecret "key" .accessKeyIdKey) }}
{{ include "syncular-server.secretEnv" (dict "name" "SYNCULAR_S3_SECRET_ACCESS_KEY" "secret" .existingSecret "key" .secretAccessKeyKey) }}
{{- end }}
{{- end }}
{{- if .Values.admin.existingSecret }}
{{ include "syncular-server.secretEnv" (dict "name" "SYNCULAR_ADMIN_TOKEN" "secret" .Values.admin.existingSecret "key" .Values.admin.key) }}
{{- end }}
{{- if .Values.signedUrls.existingSecret }}
{{ include "syncular-server.secretEnv" (dict "name" "SYNCULAR_SIGNED_URLS_KEY" "secret" .Values.signedUrls.existingSecret "key" .Values.signedUrls.key) }}
{{- end }}
{{- with .Values.policy.validatorWebhook }}
{{- if .existingSecret }}
{{ include "syncular-server.secretEnv" (dict "name" "SYNCULAR_POLICY_VALIDATOR_WEBHOOK_SECRET" "secret" .existingSecret "key" .key) }}
{{- end }}
{{- end }}
{{- with .Values.policy.reactions }}
{{- if .existingSecret }}
{{ include "syncular-server.secretEnv" (dict "name" "SYNCULAR_REACTIONS_WEBHOOK_SECRET" "secret" .existingSecret "key" .key) }}
{{- end }}
{{- end }}
{{- range $name, $e := .Values.policy.reactions.endpoints }}
{{- if $e.existingSecret }}
{{ include "syncular-server.secretEnv" (dict "name" (printf "SYNCULAR_REACTIONS_ENDPOINTS_%s_SECRET" (upper $name)) "secret" $e.existingSecret "key" (default "secret" $e.key)) }}
{{- end }}
{{- end }}
{{- with .Values.env }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "syncular-server.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: config
  mountPath: /etc/syncular/config
  readOnly: true
{{- if include "syncular-server.schemaConfigMap" . }}
- name: schema
  mountPath: /etc/syncular/schema
  readOnly: true
{{- end }}
{{- if .Values.policy.document }}
- name: policy
  mountPath: /etc/syncular/policy
  readOnly: true
{{- end }}
{{- if or .Values.operations.queries .Values.operations.commands }}
- name: operations
  mountPath: /etc/syncular/operations
  readOnly: true
{{- end }}
{{- end }}

{{- define "syncular-server.volumes" -}}
- name: tmp
  emptyDir:
    {{- with .Values.tmpVolume.medium }}
    medium: {{ . }}
    {{- end }}
    sizeLimit: {{ .Values.tmpVolume.sizeLimit }}
- name: config
  configMap:
    name: {{ include "syncular-server.fullname" . }}-config
{{- with include "syncular-server.schemaConfigMap" . }}
- name: schema
  configMap:
    name: {{ . }}
{{- end }}
{{- if .Values.policy.document }}
- name: policy
  configMap:
    name: {{ include "syncular-server.fullname" . }}-policy
{{- end }}
{{- if or .Values.operations.queries .Values.operations.commands }}
- name: operations
  configMap:
    name: {{ include "syncular-server.fullname" . }}-operations
{{- end }}
{{- end }}

{{/* The grace period must cover the preStop pause, the socket drain and a margin (docs/REALTIME.md). */}}
{{- define "syncular-server.validate" -}}
{{- range .Values.postgresql.replicas }}
{{- if or (not (hasPrefix "postgresql://" .)) (contains "@" .) }}
{{- fail "postgresql.replicas: each is a URL postgresql://host:port/db without credentials (the replicas use postgresql.existingSecret's)" }}
{{- end }}
{{- end }}
{{- $needed := add .Values.preStopSleepSeconds .Values.realtime.shutdownGraceSeconds 5 }}
{{- if lt (int .Values.terminationGracePeriodSeconds) (int $needed) }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must be at least preStopSleepSeconds + realtime.shutdownGraceSeconds + 5 = %v" .Values.terminationGracePeriodSeconds $needed) }}
{{- end }}
{{- if and .Values.schema.window (not .Values.schema.ir) }}
{{- fail "schema.window needs schema.ir (the current schema IR the older documents are served beside)" }}
{{- end }}
{{- if and .Values.schema.windowKeys (not .Values.schema.existingConfigMap) }}
{{- fail "schema.windowKeys names keys of schema.existingConfigMap; set it, or use schema.window with schema.ir" }}
{{- end }}
{{- range $name, $ir := .Values.schema.window }}
{{- if not (regexMatch "^[A-Za-z0-9][-._A-Za-z0-9]*$" $name) }}
{{- fail (printf "schema.window: the name %s must match [A-Za-z0-9][-._A-Za-z0-9]*" $name) }}
{{- end }}
{{- end }}
{{- if and .Values.policy.validatorWebhook.url (not .Values.policy.validatorWebhook.existingSecret) }}
{{- fail "policy.validatorWebhook.url needs policy.validatorWebhook.existingSecret (its signing key)" }}
{{- end }}
{{- if and .Values.policy.reactions.webhookUrl (not .Values.policy.reactions.existingSecret) }}
{{- fail "policy.reactions.webhookUrl needs policy.reactions.existingSecret (its signing key)" }}
{{- end }}
{{- range $name, $e := .Values.policy.reactions.endpoints }}
{{- if not (regexMatch "^[a-z0-9]+$" $name) }}
{{- fail (printf "policy.reactions.endpoints: the name %s must match [a-z0-9]+" $name) }}
{{- end }}
{{- if or (not $e.url) (not $e.types) }}
{{- fail (printf "policy.reactions.endpoints.%s needs a url and types" $name) }}
{{- end }}
{{- if and (not $e.existingSecret) (not $.Values.policy.reactions.existingSecret) }}
{{- fail (printf "policy.reactions.endpoints.%s needs existingSecret, or policy.reactions.existingSecret (its signing key)" $name) }}
{{- end }}
{{- end }}
{{- if and (eq .Values.s3.segmentsStore "s3") (not .Values.s3.bucket) }}
{{- fail "s3.segmentsStore=s3 needs s3.bucket" }}
{{- end }}
{{- if and (eq .Values.s3.blobsStore "s3") (not .Values.s3.bucket) }}
{{- fail "s3.blobsStore=s3 needs s3.bucket" }}
{{- end }}
{{- $_ := required "postgresql.url is required: the reactive URL of the database, e.g. postgresql://pg.example.com:5432/syncular (or postgresql.urlKey, a key of postgresql.existingSecret holding it)" (or .Values.postgresql.url .Values.postgresql.urlKey) }}
{{- $_ := required "postgresql.existingSecret is required: the Secret holding the database user and password (keys postgresql.usernameKey and postgresql.passwordKey)" .Values.postgresql.existingSecret }}
{{- if and .Values.postgresql.url .Values.postgresql.urlKey }}
{{- fail "set postgresql.url or postgresql.urlKey, not both" }}
{{- end }}
{{- if .Values.backfill.enabled }}
{{- $declared := false }}
{{- range .Values.checkpoints }}
{{- if and (eq (toString .partition) (toString $.Values.backfill.partition)) (eq (toString .name) (toString $.Values.backfill.checkpoint)) (eq (int .schemaVersion) (int $.Values.backfill.schemaVersion)) }}
{{- $declared = true }}
{{- end }}
{{- end }}
{{- if not $declared }}
{{- fail "backfill.partition/checkpoint/schemaVersion must be one of `checkpoints`: pods that do not declare it would all leave rotation while it runs" }}
{{- end }}
{{- end }}
{{- end }}

{{/* A value as the JSON literal the backfill command takes (whole numbers without an exponent). */}}
{{- define "syncular-server.jsonLiteral" -}}
{{- if and (kindIs "float64" .) (eq (floor .) .) }}
{{- int64 . }}
{{- else }}
{{- toJson . }}
{{- end }}
{{- end }}

{{/* One line of the configuration file: key=value, backslashes and line breaks escaped. */}}
{{- define "syncular-server.prop" -}}
{{ .key }}={{ toString .value | replace "\\" "\\\\" | replace "\n" "\\n" }}
{{- end }}

{{/*
The bucket boundary (Prometheus "le") of syncular_client_visibility_seconds at slo.visibility, as the server's
exporter writes it: seconds with at least one decimal (1s -> 1.0, 500ms -> 0.5, 250ms -> 0.25).
*/}}
{{- define "syncular-server.visibilityLe" -}}
{{- $v := .Values.slo.visibility | toString -}}
{{- $s := 0.0 -}}
{{- if hasSuffix "ms" $v -}}
{{- $s = divf (trimSuffix "ms" $v | float64) 1000 -}}
{{- else if hasSuffix "s" $v -}}
{{- $s = trimSuffix "s" $v | float64 -}}
{{- else -}}
{{- fail "slo.visibility: write it in s or ms (1s, 500ms) for the burn-rate alerts" -}}
{{- end -}}
{{- if eq (floor $s) $s -}}{{ printf "%.1f" $s }}{{- else -}}{{ $s }}{{- end -}}
{{- end }}
