{{/*
Objects are named as Volcano's chart names its scheduler's (<release>-scheduler...), so a release
of this chart takes the place of Volcano's scheduler under the same names.
*/}}
{{- define "tephra.name" -}}
{{ .Release.Name }}-scheduler
{{- end }}

{{/*
The metadata.labels lines of an object that carries only the common labels (none when there are
none); included right after the line before them.
*/}}
{{- define "tephra.commonLabels" -}}
{{- with .Values.custom.common_labels }}
  labels:
    {{- toYaml . | nindent 4 }}
{{- end }}
{{- end }}

{{/* `app: volcano-scheduler` (the selector), over `own`, over the common labels. */}}
{{- define "tephra.labels" -}}
{{- $own := .own | default dict -}}
{{- $common := .root.Values.custom.common_labels | default dict -}}
{{- toYaml (merge (dict "app" "volcano-scheduler") (deepCopy $own) (deepCopy $common)) }}
{{- end }}

{{/* The configuration file's name in the ConfigMap, and so under the mount directory. */}}
{{- define "tephra.confName" -}}
{{ base .Values.basic.scheduler_config_file }}
{{- end }}
